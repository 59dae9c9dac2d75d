//! The OAuth requests themselves: dynamic client registration (RFC 7591), the authorization
//! request and the validation of its response (state, then RFC 9207 `iss`, then `error`), and
//! token requests (authorization code, refresh, client credentials) with the token endpoint
//! authentication methods `client_secret_basic`, `client_secret_post`, `none` and
//! `private_key_jwt`. Nothing secret is put into an error message, and nothing the server
//! wrote either, beyond a registered OAuth error code.

use super::discovery::{AuthServer, HTTP_TIMEOUT};
use super::dpop::Dpop;
use super::jwt::Signer;
use super::store::{now_secs, ClientRecord, TokenSet};
use super::Io;
use crate::error::{Error, ErrorKind, Result};
use crate::net::redact;
use crate::untrusted::shown;
use base64::Engine;
use reqwest::header::{HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;
use url::Url;

/// Bound on a token or registration answer.
const ANSWER_MAX: usize = 64 * 1024;
/// The longest `expires_in` believed: a server's 2^64-1 must not overflow the expiry (nor keep
/// a token unrefreshed for ever).
pub(crate) const MAX_TOKEN_LIFETIME_SECS: u64 = 366 * 24 * 3600;
const JWT_BEARER_ASSERTION: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// How the client authenticates at the token endpoint. No `Debug`: it holds a secret.
#[derive(Clone)]
pub(crate) struct ClientAuth {
    pub client_id: String,
    pub secret: Option<String>,
    /// `client_secret_basic`, `client_secret_post`, `none` or `private_key_jwt`.
    pub method: String,
    pub signer: Option<Arc<Signer>>,
    /// The only authorization server this identity may be presented to: the one the host named
    /// for its pre-registered credentials, or the one a registration was made with. `None`
    /// only for identities without a secret or key (a Client ID Metadata Document URL).
    pub issuer: Option<String>,
}

impl ClientAuth {
    /// A client registered with `issuer` (records are kept per issuer).
    pub fn from_record(record: &ClientRecord, issuer: &str) -> ClientAuth {
        ClientAuth {
            client_id: record.client_id.clone(),
            secret: record.client_secret.clone(),
            method: record.token_endpoint_auth_method.clone(),
            signer: None,
            issuer: Some(issuer.to_string()),
        }
    }

    /// Whether this identity may be presented to the authorization server `issuer`. Checked
    /// by every token request, whatever the grant: a secret or key goes only to its issuer.
    pub fn may_go_to(&self, issuer: &str) -> bool {
        match &self.issuer {
            Some(bound) => bound == issuer,
            None => self.secret.is_none() && self.signer.is_none(),
        }
    }
}

fn endpoint(value: &Option<String>, name: &str) -> Result<Url> {
    let value = value
        .as_deref()
        .ok_or_else(|| Error::auth(format!("the authorization server has no {name}")))?;
    Url::parse(value).map_err(|_| Error::auth(format!("the authorization server's {name} is not a URL")))
}

/// Reads a bounded answer body.
pub(super) async fn read_answer(mut response: reqwest::Response, what: &str) -> Result<(reqwest::StatusCode, Vec<u8>)> {
    let status = response.status();
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if body.len() + chunk.len() > ANSWER_MAX {
                    return Err(Error::auth(format!(
                        "the {what} answer is larger than {ANSWER_MAX} bytes"
                    )));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok((status, body)),
            Err(e) => {
                return Err(Error::new(
                    ErrorKind::Io,
                    format!("reading the {what} answer failed: {}", redact::http_error(e)),
                ))
            }
        }
    }
}

/// The `error` code of an OAuth error answer when it is one of the registered codes (RFC 6749 §5.2,
/// RFC 7591 §3.2.2, RFC 6750 §3.1); its `error_description` and any other text the server wrote are
/// never shown (docs/network-safety.md, "What is fetched").
pub(super) fn oauth_error(body: &[u8]) -> String {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    match v.get("error").and_then(Value::as_str) {
        Some(e) if CODES.contains(&e) => e.to_string(),
        Some(_) => "an unregistered OAuth error".into(),
        None => "no OAuth error in the answer".into(),
    }
}

/// The registered OAuth error code of an answer, if it has one (for `Error::oauth_error`).
pub(super) fn registered_error(body: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    v.get("error")
        .and_then(Value::as_str)
        .filter(|e| CODES.contains(e))
        .map(str::to_string)
}

/// Registered OAuth error codes (RFC 6749, 7591, 6750, 8693, 9449).
const CODES: &[&str] = &[
    "invalid_request",
    "invalid_client",
    "invalid_grant",
    "unauthorized_client",
    "unsupported_grant_type",
    "invalid_scope",
    "invalid_target",
    "invalid_redirect_uri",
    "invalid_client_metadata",
    "invalid_software_statement",
    "unapproved_software_statement",
    "invalid_token",
    "insufficient_scope",
    "access_denied",
    "server_error",
    "temporarily_unavailable",
    "use_dpop_nonce",
    "invalid_dpop_proof",
];

/// The method a registration asks for: `none` (a public native client with PKCE) when the
/// server allows it, else a secret-based one it supports.
pub(crate) fn preferred_method(server: &AuthServer) -> String {
    let supported = server.meta.auth_methods();
    for m in ["none", "client_secret_basic", "client_secret_post"] {
        if supported.iter().any(|s| s == m) {
            return m.into();
        }
    }
    "none".into()
}

/// Dynamic client registration with `application_type` (SEP-837).
pub(crate) async fn register(
    io: &Io,
    server: &AuthServer,
    client_name: &str,
    application_type: &str,
    redirect_uri: &str,
    method: Option<&str>,
) -> Result<ClientRecord> {
    let url = endpoint(&server.meta.registration_endpoint, "registration_endpoint")?;
    let requested = method.map(str::to_string).unwrap_or_else(|| preferred_method(server));
    let body = json!({
        "client_name": client_name,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": requested,
        "application_type": application_type,
    });
    let response = io
        .client_for(&url)
        .map_err(|e| e.context("client registration"))?
        .post(url.clone())
        .timeout(HTTP_TIMEOUT)
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json")
        .body(body.to_string())
        .send()
        .await
        .map_err(|e| Io::send_error(e, &format!("client registration at {}", redact::url(&url))))?;
    let (status, body) = read_answer(response, "registration").await?;
    if !status.is_success() {
        return Err(Error::auth(format!(
            "the authorization server refused the client registration (HTTP {status}): {}",
            oauth_error(&body)
        )));
    }
    let v: Value = serde_json::from_slice(&body).map_err(|_| Error::auth("the registration answer is not JSON"))?;
    let client_id = v
        .get("client_id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| Error::auth("the registration answer has no client_id"))?
        .to_string();
    let client_secret = v.get("client_secret").and_then(Value::as_str).map(str::to_string);
    let mut method = v
        .get("token_endpoint_auth_method")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or(requested);
    if method.starts_with("client_secret_") && client_secret.is_none() {
        method = "none".into();
    }
    let redirect_uris = v
        .get("redirect_uris")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_else(|| vec![redirect_uri.to_string()]);
    io.log(format!(
        "registered the client {} with {}",
        shown(&client_id),
        shown(&server.issuer)
    ));
    Ok(ClientRecord {
        client_id,
        client_secret,
        token_endpoint_auth_method: method,
        redirect_uris,
        client_secret_expires_at: v
            .get("client_secret_expires_at")
            .and_then(Value::as_u64)
            .filter(|t| *t > 0),
    })
}

/// Whether a registered redirect URI serves `current`: equal, or both loopback IP literals
/// differing only in the port (RFC 8252 §7.3).
pub(crate) fn redirect_serves(registered: &str, current: &str) -> bool {
    if registered == current {
        return true;
    }
    match (Url::parse(registered), Url::parse(current)) {
        (Ok(a), Ok(b)) => {
            let loopback_ip = |u: &Url| matches!(u.host(), Some(url::Host::Ipv4(ip)) if ip.is_loopback());
            loopback_ip(&a)
                && loopback_ip(&b)
                && a.scheme() == b.scheme()
                && a.host() == b.host()
                && a.path() == b.path()
        }
        _ => false,
    }
}

/// The authorization request URL (PKCE S256, state, resource, scope).
pub(crate) fn authorization_url(
    server: &AuthServer,
    client_id: &str,
    redirect_uri: &str,
    code_challenge: &str,
    state: &str,
    resource: &str,
    scope: Option<&str>,
) -> Result<String> {
    let mut url = endpoint(&server.meta.authorization_endpoint, "authorization_endpoint")?;
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("response_type", "code")
            .append_pair("client_id", client_id)
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("code_challenge", code_challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", state)
            .append_pair("resource", resource);
        if let Some(scope) = scope {
            q.append_pair("scope", scope);
        }
    }
    Ok(url.to_string())
}

/// Validates the authorization response and returns its code. The order matters: a response
/// whose `state` or `iss` does not match is dropped without looking at anything else in it
/// (RFC 9207: its error parameters are neither acted on nor shown).
pub(crate) fn check_redirect(
    redirect: &str,
    redirect_uri: &str,
    state: &str,
    issuer: &str,
    iss_supported: Option<bool>,
) -> Result<String> {
    let url = Url::parse(redirect).map_err(|_| Error::auth("the redirect handed back is not a URL; ignored"))?;
    let expected = Url::parse(redirect_uri).map_err(|_| Error::auth("the redirect_uri is not a URL"))?;
    if url.scheme() != expected.scheme()
        || url.host() != expected.host()
        || url.port_or_known_default() != expected.port_or_known_default()
        || url.path() != expected.path()
    {
        return Err(Error::auth(
            "the redirect handed back does not go to this flow's redirect_uri; ignored",
        ));
    }
    let mut params: HashMap<String, String> = HashMap::new();
    for (k, v) in url.query_pairs() {
        if params.insert(k.to_string(), v.to_string()).is_some() {
            return Err(Error::auth("the authorization response repeats a parameter; ignored"));
        }
    }
    if params.get("state").map(String::as_str) != Some(state) {
        return Err(Error::auth(
            "the authorization response's state does not match this flow; ignored",
        ));
    }
    match (params.get("iss"), iss_supported == Some(true)) {
        (Some(iss), _) if iss != issuer => {
            return Err(Error::auth(format!(
                "the authorization response's iss does not match the authorization server {}; ignored (RFC 9207)",
                shown(issuer)
            )))
        }
        (None, true) => {
            return Err(Error::auth(format!(
                "the authorization server {} promises an iss parameter, but the authorization response has none; ignored (RFC 9207)",
                shown(issuer)
            )))
        }
        _ => {}
    }
    if let Some(error) = params.get("error") {
        let description = params
            .get("error_description")
            .map(|d| format!(": {}", shown(d)))
            .unwrap_or_default();
        return Err(Error::auth(format!(
            "the authorization server refused the authorization: {}{description}",
            shown(error)
        )));
    }
    params
        .remove("code")
        .filter(|c| !c.is_empty())
        .ok_or_else(|| Error::auth("the authorization response carries no code"))
}

/// `Basic base64(urlencode(id):urlencode(secret))` (RFC 6749 §2.3.1), marked sensitive.
pub(super) fn basic(client_id: &str, secret: &str) -> Result<HeaderValue> {
    let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let raw = format!("{}:{}", enc(client_id), enc(secret));
    let mut value = HeaderValue::from_str(&format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(raw)
    ))
    .map_err(|_| Error::invalid("the client credentials cannot be sent in a header"))?;
    value.set_sensitive(true);
    Ok(value)
}

/// One token request: `form` plus the client's authentication; the answer must be a Bearer
/// token. `requested_scope` stands in for a `scope` the server does not echo.
pub(crate) async fn token_request(
    io: &Io,
    server: &AuthServer,
    client: &ClientAuth,
    mut form: Vec<(&'static str, String)>,
    dpop: Option<&Dpop>,
    requested_scope: Option<&str>,
) -> Result<TokenSet> {
    if !client.may_go_to(&server.issuer) {
        return Err(Error::auth(
            "the client credentials belong to another authorization server than this one; not sending them",
        ));
    }
    let url = endpoint(&server.meta.token_endpoint, "token_endpoint")?;
    let grant = form
        .iter()
        .find(|(k, _)| *k == "grant_type")
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    let http = io
        .client_for(&url)
        .map_err(|e| e.context(&format!("the {grant} token request")))?;
    let mut authorization = None;
    let secret = || {
        client
            .secret
            .clone()
            .ok_or_else(|| Error::auth("the client's authentication method needs a client secret, and there is none"))
    };
    match client.method.as_str() {
        "client_secret_basic" => authorization = Some(basic(&client.client_id, &secret()?)?),
        "client_secret_post" => {
            form.push(("client_id", client.client_id.clone()));
            form.push(("client_secret", secret()?));
        }
        "private_key_jwt" => {
            let signer = client
                .signer
                .as_ref()
                .ok_or_else(|| Error::auth("private_key_jwt needs oauth.private_key_pem"))?;
            form.push(("client_id", client.client_id.clone()));
            form.push(("client_assertion_type", JWT_BEARER_ASSERTION.into()));
            form.push(("client_assertion", signer.assertion(&client.client_id, &server.issuer)?));
        }
        // An assertion grant without a configured client sends no client id at all.
        _ if client.client_id.is_empty() => {}
        _ => form.push(("client_id", client.client_id.clone())),
    }
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form.iter().map(|(k, v)| (*k, v.as_str())))
        .finish();
    // With DPoP, a 400 `use_dpop_nonce` carrying a nonce is answered once more with a proof
    // holding it (RFC 9449 §8); the grant (a code, a refresh token) is still unspent.
    let mut nonce_retried = false;
    let (status, body) = loop {
        let mut request = http
            .post(url.clone())
            .timeout(HTTP_TIMEOUT)
            .header(ACCEPT, "application/json")
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded");
        if let Some(value) = &authorization {
            request = request.header(AUTHORIZATION, value.clone());
        }
        if let Some(d) = dpop {
            request = request.header(super::dpop::PROOF_HEADER, d.proof("POST", &url, None)?);
        }
        let response = request
            .body(body.clone())
            .send()
            .await
            .map_err(|e| Io::send_error(e, &format!("the {grant} token request to {}", redact::url(&url))))?;
        let got_nonce = dpop.is_some_and(|d| d.note_nonce(&url, response.headers()));
        let (status, body) = read_answer(response, "token").await?;
        if status == reqwest::StatusCode::BAD_REQUEST
            && got_nonce
            && !nonce_retried
            && oauth_error(&body) == super::dpop::USE_NONCE
        {
            nonce_retried = true;
            continue;
        }
        break (status, body);
    };
    if !status.is_success() {
        let code = oauth_error(&body);
        let registered = registered_error(&body);
        return Err(Error::auth(format!(
            "the token endpoint refused the {grant} request (HTTP {status}): {code}"
        ))
        .with_http_status(status.as_u16())
        .with_oauth_error(registered));
    }
    parse_tokens(&body, requested_scope, dpop.is_some())
}

fn parse_tokens(body: &[u8], requested_scope: Option<&str>, dpop: bool) -> Result<TokenSet> {
    let v: Value = serde_json::from_slice(body).map_err(|_| Error::auth("the token endpoint's answer is not JSON"))?;
    let access_token = v
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| Error::auth("the token endpoint's answer has no access_token"))?;
    if !access_token.bytes().all(|b| (0x21..0x7f).contains(&b)) {
        return Err(Error::auth(
            "the access token contains characters a header cannot carry",
        ));
    }
    // A DPoP-bound token (RFC 9449 §5) only when this request carried a proof; otherwise
    // Bearer is the only type this client can present.
    let token_type = match v.get("token_type").and_then(Value::as_str).unwrap_or("Bearer") {
        t if t.eq_ignore_ascii_case("bearer") => "Bearer",
        t if dpop && t.eq_ignore_ascii_case("dpop") => "DPoP",
        _ => {
            return Err(Error::auth(if dpop {
                "the token endpoint issued a token of another type than Bearer or DPoP"
            } else {
                "the token endpoint issued a token of another type than Bearer, the only one supported"
            }))
        }
    };
    let expires_in = v.get("expires_in").and_then(|e| {
        e.as_u64()
            .or_else(|| e.as_f64().map(|f| f.max(0.0) as u64))
            .or_else(|| e.as_str().and_then(|s| s.parse().ok()))
    });
    Ok(TokenSet {
        access_token: access_token.to_string(),
        token_type: token_type.into(),
        refresh_token: v
            .get("refresh_token")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .map(str::to_string),
        expires_at: expires_in.map(|s| now_secs().saturating_add(s.min(MAX_TOKEN_LIFETIME_SECS))),
        scope: v
            .get("scope")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| requested_scope.map(str::to_string)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ISS: &str = "https://as.example";

    fn check(redirect: &str, supported: Option<bool>) -> Result<String> {
        check_redirect(redirect, "http://localhost:3000/callback", "s1", ISS, supported)
    }

    #[test]
    fn rfc9207_table() {
        let ok = "http://localhost:3000/callback?code=c&state=s1";
        let with_iss = |iss: &str| {
            format!(
                "{ok}&iss={}",
                url::form_urlencoded::byte_serialize(iss.as_bytes()).collect::<String>()
            )
        };
        // supported + present: compared exactly.
        assert_eq!(check(&with_iss(ISS), Some(true)).unwrap(), "c");
        assert!(check(&with_iss("https://evil.example.com"), Some(true)).is_err());
        assert!(check(&with_iss("https://as.example/"), Some(true)).is_err());
        assert!(check(&with_iss("HTTPS://as.example"), Some(true)).is_err());
        // supported + absent: rejected.
        assert!(check(ok, Some(true)).is_err());
        // not advertised + present: compared.
        assert_eq!(check(&with_iss(ISS), None).unwrap(), "c");
        assert!(check(&with_iss("https://evil.example.com"), Some(false)).is_err());
        // not advertised + absent: proceed.
        assert_eq!(check(ok, None).unwrap(), "c");
        assert_eq!(check(ok, Some(false)).unwrap(), "c");
    }

    #[test]
    fn mismatched_responses_show_nothing() {
        let e = check(
            "http://localhost:3000/callback?error=access_denied&error_description=PWNED&state=s1&iss=https%3A%2F%2Fevil",
            Some(true),
        )
        .unwrap_err();
        assert!(
            !e.message().contains("PWNED") && !e.message().contains("access_denied"),
            "{e}"
        );
        let e = check("http://localhost:3000/callback?error=access_denied&state=nope", None).unwrap_err();
        assert!(!e.message().contains("access_denied"), "{e}");
        let e = check("http://localhost:3000/callback?error=access_denied&state=s1", None).unwrap_err();
        assert!(e.message().contains("access_denied"), "{e}");
        assert!(check("http://localhost:3001/callback?code=c&state=s1", None).is_err());
        assert!(check("http://localhost:3000/callback?code=c&state=s1&state=s1", None).is_err());
    }

    #[test]
    fn token_answers() {
        let t = parse_tokens(
            br#"{"access_token":"a","token_type":"bearer","expires_in":60,"refresh_token":"r"}"#,
            Some("x"),
            false,
        )
        .unwrap();
        assert_eq!((t.access_token.as_str(), t.scope.as_deref()), ("a", Some("x")));
        assert!(t.expires_at.unwrap() >= now_secs() + 59);
        // Absurd lifetimes are capped, never overflowing (debug builds panicked on 2^64-1).
        for huge in ["18446744073709551615", "1e300", "\"18446744073709551615\""] {
            let body = format!(r#"{{"access_token":"a","expires_in":{huge}}}"#);
            let at = parse_tokens(body.as_bytes(), None, false).unwrap().expires_at.unwrap();
            assert!(
                at <= now_secs() + MAX_TOKEN_LIFETIME_SECS && at + 5 >= now_secs() + MAX_TOKEN_LIFETIME_SECS,
                "{huge}"
            );
        }
        let t = parse_tokens(br#"{"access_token":"a","expires_in":-5}"#, None, false).unwrap();
        assert!(t.expires_at.unwrap() <= now_secs());
        assert!(parse_tokens(br#"{"access_token":"a","token_type":"DPoP"}"#, None, false).is_err());
        // With a proof sent, a DPoP-bound token is kept as such (never presented as Bearer).
        let t = parse_tokens(br#"{"access_token":"a","token_type":"dpop"}"#, None, true).unwrap();
        assert_eq!(t.token_type, "DPoP");
        assert!(parse_tokens(br#"{"access_token":"a","token_type":"mac"}"#, None, true).is_err());
        assert!(parse_tokens(br#"{"access_token":"a b"}"#, None, false).is_err());
        assert!(parse_tokens(br#"{"token_type":"Bearer"}"#, None, false).is_err());
    }

    #[test]
    fn loopback_redirects_ignore_the_port() {
        assert!(redirect_serves(
            "http://127.0.0.1:1/callback",
            "http://127.0.0.1:2/callback"
        ));
        assert!(!redirect_serves(
            "http://127.0.0.1:1/callback",
            "http://127.0.0.1:2/other"
        ));
        assert!(!redirect_serves(
            "http://localhost:1/callback",
            "http://localhost:2/callback"
        ));
        assert!(redirect_serves("myapp://cb", "myapp://cb"));
    }

    #[test]
    fn basic_credentials_are_form_encoded() {
        let v = basic("a b", "p:w").unwrap();
        let raw = base64::engine::general_purpose::STANDARD
            .decode(v.to_str().unwrap().strip_prefix("Basic ").unwrap())
            .unwrap();
        assert_eq!(String::from_utf8(raw).unwrap(), "a+b:p%3Aw");
        assert!(v.is_sensitive());
    }
}
