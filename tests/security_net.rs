//! Hostile servers against the network rules (SSRF through discovery, tokens over plain http,
//! URLs in errors), driven through the exported C functions. Everything listens on
//! 127.0.0.1; "remote" names (`mcp.test`, `as.test`, ...) are pinned to 127.0.0.1 with the
//! `resolve` setting, so the MCP server is *not* loopback by its URL and the loopback
//! allowance stays off, as for a real remote server.
//!
//! A canary server stands for what an attacker aims at (an admin port, the intranet); every
//! test checks that it saw no connection at all. Only loopback targets are used, so even a
//! broken build dials nothing outside 127.0.0.1; the other classes (private, link-local,
//! carrier-grade NAT, special) go through the same checks and are covered address by address
//! by the unit tests of `src/net`.

#[path = "http_support/mod.rs"]
mod http_support;

use ::mcp_client::ffi::auth::mcp_auth_fetch_redirect;
use ::mcp_client::ffi::client::*;
use ::mcp_client::ffi::config::*;
use ::mcp_client::ffi::error::*;
use ::mcp_client::ffi::status::*;
use http_support::{discover_result, result, Reply, Request, Server};
use serde_json::{json, Value};
use std::ffi::{c_char, CStr, CString};
use std::ptr;
use std::sync::{Arc, Mutex};

unsafe fn text(p: *const c_char) -> String {
    CStr::from_ptr(p).to_string_lossy().into_owned()
}

unsafe fn take_error(err: *mut mcp_error) -> String {
    let message = text(mcp_error_message(err));
    mcp_error_free(err);
    message
}

/// `mcp_config_new` + `mcp_client_new` from one JSON configuration.
unsafe fn new_client(config: &Value) -> Result<*mut mcp_client, (mcp_status, String)> {
    let mut cfg = ptr::null_mut();
    let mut err = ptr::null_mut();
    let json = CString::new(config.to_string()).unwrap();
    assert_eq!(mcp_config_new(json.as_ptr(), &mut cfg, ptr::null_mut()), MCP_OK);
    let mut client = ptr::null_mut();
    let st = mcp_client_new(cfg, &mut client, &mut err);
    mcp_config_free(cfg);
    if st != MCP_OK {
        return Err((st, take_error(err)));
    }
    Ok(client)
}

/// Creates, connects and frees a client; the connect's status and message.
unsafe fn connect_once(config: &Value) -> Result<(), (mcp_status, String)> {
    let client = new_client(config)?;
    let mut err = ptr::null_mut();
    let st = mcp_client_connect(client, ptr::null(), ptr::null_mut(), &mut err);
    mcp_client_free(client);
    if st == MCP_OK {
        Ok(())
    } else {
        Err((st, take_error(err)))
    }
}

/// What the hostile MCP server says: the challenge's `resource_metadata` (absolute, or a path
/// on its own origin) and the authorization servers its metadata names.
#[derive(Default)]
struct Script {
    /// The server's own URL as clients are told to use it (`http://mcp.test:<port>`).
    me: String,
    resource_metadata: String,
    authorization_servers: Vec<String>,
    /// A token it accepts.
    accept: Option<String>,
    /// `GET /moved` answers 302 to this URL.
    moved_to: Option<String>,
}

struct Mcp {
    server: Server,
    script: Arc<Mutex<Script>>,
}

impl Mcp {
    async fn start(name: &str) -> Mcp {
        let script = Arc::new(Mutex::new(Script::default()));
        let s = script.clone();
        let server = Server::start(move |req: Request| {
            let s = s.clone();
            async move { hostile_mcp(req, &s.lock().unwrap()) }
        })
        .await;
        script.lock().unwrap().me = format!("http://{name}:{}", server.addr.port());
        Mcp { server, script }
    }

    fn url(&self) -> String {
        format!("{}/mcp", self.script.lock().unwrap().me)
    }

    fn script(&self, f: impl FnOnce(&mut Script)) {
        f(&mut self.script.lock().unwrap());
    }
}

fn hostile_mcp(req: Request, s: &Script) -> Reply {
    let path = req.path.split('?').next().unwrap_or("");
    if let (Some(to), "/moved") = (&s.moved_to, path) {
        return Reply::status(302).with_header("location", to);
    }
    if req.method == "GET" && path.starts_with("/.well-known/oauth-protected-resource") {
        return Reply::json(json!({
            "resource": format!("{}/mcp", s.me),
            "authorization_servers": s.authorization_servers,
        }));
    }
    if req.method == "POST" && path == "/mcp" {
        let token = req.header("authorization").and_then(|v| v.strip_prefix("Bearer "));
        if token.is_some() && token == s.accept.as_deref() {
            return Reply::json(result(&req.id(), discover_result()));
        }
        return Reply::json_status(401, json!({"error": "invalid_token"})).with_header(
            "www-authenticate",
            &format!("Bearer resource_metadata=\"{}\"", s.resource_metadata),
        );
    }
    Reply::status(404)
}

/// What the hostile authorization server answers on its token and registration endpoints.
#[derive(Default, Clone)]
struct AsScript {
    me: String,
    /// `token_endpoint` in the metadata (default: its own `/token`).
    token_endpoint: Option<String>,
    /// `/token` answers 307 to this URL.
    token_redirect: Option<String>,
}

async fn authorization_server(name: &str) -> (Server, Arc<Mutex<AsScript>>) {
    let script = Arc::new(Mutex::new(AsScript::default()));
    let s = script.clone();
    let server = Server::start(move |req: Request| {
        let s = s.lock().unwrap().clone();
        async move {
            match (req.method.as_str(), req.path.split('?').next().unwrap_or("")) {
                ("GET", "/.well-known/oauth-authorization-server") => Reply::json(json!({
                    "issuer": s.me,
                    "authorization_endpoint": format!("{}/authorize", s.me),
                    "token_endpoint": s.token_endpoint.clone().unwrap_or_else(|| format!("{}/token", s.me)),
                    "registration_endpoint": format!("{}/register", s.me),
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"],
                })),
                ("POST", "/token") => match &s.token_redirect {
                    Some(to) => Reply::status(307).with_header("location", to),
                    None => Reply::json_status(400, json!({"error": "invalid_client"})),
                },
                ("POST", "/register") => Reply::json_status(
                    400,
                    json!({"error": "invalid_client_metadata", "error_description": "REFLECTED-SECRET\r\nforged"}),
                ),
                _ => Reply::status(404),
            }
        }
    })
    .await;
    script.lock().unwrap().me = format!("http://{name}:{}", server.addr.port());
    (server, script)
}

/// A listener that answers anything; it stands for the target of an attack.
async fn canary() -> Server {
    Server::start(|_req| async { Reply::json(json!({"resource": "x", "authorization_servers": ["x"]})) }).await
}

/// A configuration for `url` with OAuth, plain http allowed (the test servers have no TLS) and
/// the test names pinned to 127.0.0.1.
fn oauth_config(url: &str, oauth: Value, resolve: Value) -> Value {
    json!({
        "url": url,
        "mode": "modern",
        "request_timeout_ms": 10000,
        "allow_insecure_http": true,
        "resolve": resolve,
        "oauth": oauth,
    })
}

fn pinned(names: &[&str]) -> Value {
    let mut m = serde_json::Map::new();
    for n in names {
        m.insert(n.to_string(), json!("127.0.0.1"));
    }
    Value::Object(m)
}

/// A `resource_metadata` or `authorization_servers` entry aimed at the host's
/// own network is refused before any connection, whether the address is written as a literal
/// (in any spelling) or is what a name resolves to; the host can open a host with
/// `allow_hosts` and close one with `deny_hosts`.
#[test]
fn discovery_cannot_reach_internal_addresses() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (mcp, target) = rt.block_on(async { (Mcp::start("mcp.test").await, canary().await) });
    let port = target.addr.port();
    let resolve = pinned(&["mcp.test", "internal.test"]);
    let config = oauth_config(&mcp.url(), json!({}), resolve.clone());
    for (aim, why) in [
        (format!("http://127.0.0.1:{port}/admin?probe=1"), "loopback"),
        (format!("http://[::ffff:127.0.0.1]:{port}/admin"), "loopback"),
        (format!("http://0x7f.1:{port}/admin"), "loopback"),
        (format!("http://2130706433:{port}/admin"), "loopback"),
        (format!("http://localhost:{port}/admin"), "loopback"),
        (
            format!("http://internal.test:{port}/.well-known/oauth-protected-resource?probe=1"),
            "loopback",
        ),
        (format!("http://a.localhost.:{port}/admin"), "loopback"),
    ] {
        mcp.script(|s| s.resource_metadata = aim.clone());
        let (st, message) = unsafe { connect_once(&config) }.unwrap_err();
        assert_eq!(st, MCP_AUTH_REQUIRED, "{aim}: {message}");
        assert!(message.contains(why), "{aim}: {message}");
        assert!(!message.contains("probe"), "the query is not shown: {message}");
    }
    // A redirect from the server's own metadata URL is not followed.
    mcp.script(|s| {
        s.resource_metadata = format!("{}/moved", s.me);
        s.moved_to = Some(format!("http://127.0.0.1:{port}/admin"));
    });
    let (st, message) = unsafe { connect_once(&config) }.unwrap_err();
    assert_eq!(st, MCP_AUTH_REQUIRED, "{message}");
    assert!(mcp.server.requests().iter().any(|r| r.path == "/moved"));
    assert_eq!(
        target.connections(),
        0,
        "the target was contacted: {:?}",
        target.summary()
    );

    // The authorization server named by the metadata (on the MCP server's own origin, which is
    // always allowed) resolves to loopback: refused, unless the host allows that host.
    let (auth, auth_script) = rt.block_on(authorization_server("as.test"));
    let issuer = auth_script.lock().unwrap().me.clone();
    mcp.script(|s| {
        s.resource_metadata = format!("{}/.well-known/oauth-protected-resource/mcp", s.me);
        s.authorization_servers = vec![issuer.clone()];
    });
    let mut resolve = resolve;
    resolve["as.test"] = json!("127.0.0.1");
    let (st, message) = unsafe { connect_once(&oauth_config(&mcp.url(), json!({}), resolve.clone())) }.unwrap_err();
    assert_eq!(st, MCP_AUTH_REQUIRED, "{message}");
    assert!(message.contains("as.test (resolved)"), "{message}");
    assert_eq!(auth.connections(), 0);
    assert!(
        mcp.server
            .requests()
            .iter()
            .any(|r| r.path.starts_with("/.well-known/")),
        "the MCP server's own metadata is read"
    );

    let allowed = json!({"allow_hosts": ["as.test"], "redirect_uri": "http://localhost:3000/callback"});
    let (_, message) =
        unsafe { connect_once(&oauth_config(&mcp.url(), allowed.clone(), resolve.clone())) }.unwrap_err();
    assert!(
        auth.requests()
            .iter()
            .any(|r| r.path == "/.well-known/oauth-authorization-server"),
        "allow_hosts opens the host: {message}"
    );
    // ... and a deny entry wins over everything.
    let before = auth.connections();
    let denied = json!({"allow_hosts": ["as.test"], "deny_hosts": ["127.0.0.0/8"]});
    let (_, message) = unsafe { connect_once(&oauth_config(&mcp.url(), denied, resolve)) }.unwrap_err();
    assert!(message.contains("deny list"), "{message}");
    assert_eq!(auth.connections(), before);
}

/// A loopback MCP server (the conformance mocks) may use a loopback authorization server;
/// the host can still close that with `deny_hosts`.
#[test]
fn a_loopback_server_opens_loopback_only() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (mcp, (auth, auth_script)) =
        rt.block_on(async { (Mcp::start("127.0.0.1").await, authorization_server("127.0.0.1").await) });
    let issuer = auth_script.lock().unwrap().me.clone();
    mcp.script(|s| {
        s.resource_metadata = format!("{}/.well-known/oauth-protected-resource/mcp", s.me);
        s.authorization_servers = vec![issuer];
    });
    let oauth = json!({"redirect_uri": "http://localhost:3000/callback"});
    let config = json!({"url": mcp.url(), "mode": "modern", "request_timeout_ms": 10000, "oauth": oauth});
    let (_, message) = unsafe { connect_once(&config) }.unwrap_err();
    assert!(
        auth.requests().iter().any(|r| r.path.starts_with("/.well-known/")),
        "{message}"
    );
    // It registered (the hostile registration endpoint refused, with a description that must
    // not be shown: only the registered error code is).
    assert!(message.contains("invalid_client_metadata"), "{message}");
    assert!(!message.contains("REFLECTED") && !message.contains('\n'), "{message}");

    let before = auth.connections();
    let mut denied = config.clone();
    denied["oauth"]["deny_hosts"] = json!(["127.0.0.1"]);
    let (_, message) = unsafe { connect_once(&denied) }.unwrap_err();
    assert!(message.contains("deny list"), "{message}");
    assert_eq!(auth.connections(), before);
}

/// Token endpoints: one aimed at an internal address is refused when the metadata is read, and
/// a token POST answered with a 307 is not re-sent (with the client secret) anywhere.
#[test]
fn token_requests_are_not_redirected_or_aimed_inside() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (mcp, (auth, auth_script), target) = rt.block_on(async {
        (
            Mcp::start("mcp.test").await,
            authorization_server("as.test").await,
            canary().await,
        )
    });
    let issuer = auth_script.lock().unwrap().me.clone();
    mcp.script(|s| {
        s.resource_metadata = format!("{}/.well-known/oauth-protected-resource/mcp", s.me);
        s.authorization_servers = vec![issuer.clone()];
    });
    let oauth = json!({
        "grant": "client_credentials",
        "client_id": "machine",
        "client_secret": "TOP-SECRET",
        "issuer": issuer,
        "allow_hosts": ["as.test"],
    });
    let config = oauth_config(&mcp.url(), oauth, pinned(&["mcp.test", "as.test"]));

    auth_script.lock().unwrap().token_redirect = Some(target.url("/token"));
    let (st, message) = unsafe { connect_once(&config) }.unwrap_err();
    assert_eq!(st, MCP_AUTH_REQUIRED, "{message}");
    assert_eq!(
        auth.requests().iter().filter(|r| r.path == "/token").count(),
        1,
        "{:?}",
        auth.summary()
    );

    auth_script.lock().unwrap().token_endpoint = Some(target.url("/token"));
    let (_, message) = unsafe { connect_once(&config) }.unwrap_err();
    assert!(
        message.contains("token_endpoint") && message.contains("loopback"),
        "{message}"
    );
    assert!(!message.contains("TOP-SECRET"));
    assert_eq!(target.connections(), 0, "{:?}", target.summary());
}

/// A token (static or OAuth) goes over plain http only to loopback, unless the
/// host sets `allow_insecure_http`.
#[test]
fn tokens_over_plain_http_only_to_loopback() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mcp = rt.block_on(Mcp::start("mcp.test"));
    mcp.script(|s| s.accept = Some("T0KEN".into()));
    let base = json!({"url": mcp.url(), "mode": "modern", "resolve": pinned(&["mcp.test"])});
    for extra in [
        json!({"bearer_token": "T0KEN"}),
        json!({"oauth": {}}),
        json!({"headers": {"Authorization": "Bearer T0KEN"}}),
    ] {
        let mut config = base.clone();
        config
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let (st, message) = unsafe { new_client(&config) }.unwrap_err();
        assert_eq!(st, MCP_INVALID_ARG, "{extra}");
        assert!(message.contains("allow_insecure_http"), "{message}");
        assert!(!message.contains("T0KEN"), "{message}");
    }
    assert!(mcp.server.requests().is_empty());

    // Without a token, plain http is fine; with the opt-in, the token goes.
    assert_eq!(unsafe { connect_once(&base) }.unwrap_err().0, MCP_AUTH_REQUIRED);
    let mut config = base.clone();
    config["bearer_token"] = json!("T0KEN");
    config["allow_insecure_http"] = json!(true);
    unsafe { connect_once(&config) }.unwrap();
    assert!(mcp
        .server
        .requests()
        .iter()
        .any(|r| r.header("authorization") == Some("Bearer T0KEN")));

    // Loopback needs no opt-in.
    let local = rt.block_on(Mcp::start("127.0.0.1"));
    local.script(|s| s.accept = Some("T0KEN".into()));
    unsafe { connect_once(&json!({"url": local.url(), "mode": "modern", "bearer_token": "T0KEN"})) }.unwrap();
    let localhost = format!("http://localhost:{}/mcp", local.server.addr.port());
    unsafe { new_client(&json!({"url": localhost, "bearer_token": "T0KEN"})) }
        .map(|c| unsafe { mcp_client_free(c) })
        .unwrap();
}

/// Request URLs in errors lose their query and userinfo (codes, state, keys).
#[test]
fn urls_in_errors_carry_no_query() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (st, message) = unsafe {
        connect_once(&json!({"url": format!("http://127.0.0.1:{closed}/mcp?api_key=SECRET9"), "mode": "modern"}))
    }
    .unwrap_err();
    assert_eq!(st, MCP_IO, "{message}");
    assert!(
        !message.contains("SECRET9") && !message.contains("api_key"),
        "{message}"
    );

    let failing = rt.block_on(Server::start(|_req| async { Reply::text(500, "down") }));
    let url = failing.url("/mcp?api_key=SECRET9");
    let (st, message) = unsafe { connect_once(&json!({"url": url, "mode": "modern"})) }.unwrap_err();
    assert_eq!(st, MCP_HTTP_STATUS, "{message}");
    assert!(message.contains("/mcp") && !message.contains("SECRET9"), "{message}");

    let (st, message) = unsafe { new_client(&json!({"url": "http://user:SECRET9@127.0.0.1:1/mcp"})) }.unwrap_err();
    assert_eq!(st, MCP_INVALID_ARG);
    assert!(!message.contains("SECRET9"), "{message}");

    // Metadata named by the challenge, on the server's own origin, with a state in its query.
    let mcp = rt.block_on(Mcp::start("127.0.0.1"));
    mcp.script(|s| s.resource_metadata = format!("{}/nothing-here?state=SECRET9", s.me));
    let (_, message) = unsafe { connect_once(&json!({"url": mcp.url(), "mode": "modern", "oauth": {}})) }.unwrap_err();
    assert!(!message.contains("SECRET9"), "{message}");

    let authorize = CString::new(format!("http://127.0.0.1:{closed}/authorize?state=SECRET9&code=C")).unwrap();
    let (mut location, mut err) = (ptr::null_mut(), ptr::null_mut());
    let st = unsafe { mcp_auth_fetch_redirect(authorize.as_ptr(), 2000, &mut location, &mut err) };
    assert_eq!(st, MCP_IO);
    let message = unsafe { take_error(err) };
    assert!(
        message.contains("/authorize") && !message.contains("SECRET9"),
        "{message}"
    );
}

/// A loopback MCP server (reached through a tunnel or a sidecar) may name metadata on another
/// local port only at the protected resource metadata well-known path: any other path there is
/// refused before a connection, with a message that says why, unless the host listed that host
/// in `allow_hosts`. The server's own origin stays free.
#[test]
fn metadata_on_another_port_only_at_the_well_known_path() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (mcp, target) = rt.block_on(async { (Mcp::start("127.0.0.1").await, canary().await) });
    let other = format!("http://127.0.0.1:{}", target.addr.port());
    let config = json!({"url": mcp.url(), "mode": "modern", "request_timeout_ms": 10000, "oauth": {}});

    for path in [
        "/admin?probe=1",
        "/",
        "/.well-known/oauth-protected-resourcex",
        "/.well-known/x/../../admin",
    ] {
        mcp.script(|s| s.resource_metadata = format!("{other}{path}"));
        let (st, message) = unsafe { connect_once(&config) }.unwrap_err();
        assert_eq!(st, MCP_AUTH_REQUIRED, "{path}: {message}");
        assert!(
            message.contains("off the well-known path /.well-known/oauth-protected-resource")
                && message.contains("allow_hosts")
                && !message.contains("probe"),
            "{path}: {message}"
        );
    }
    assert_eq!(target.connections(), 0, "{:?}", target.summary());

    // The well-known path (root or path-aware) on the other port is read; the canary's
    // document describes another resource, which is refused after the fetch.
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        mcp.script(|s| s.resource_metadata = format!("{other}{path}"));
        let (st, message) = unsafe { connect_once(&config) }.unwrap_err();
        assert_eq!(st, MCP_AUTH_REQUIRED, "{message}");
        assert!(message.contains("another resource"), "{message}");
        assert!(target.requests().iter().any(|r| r.path == path), "{path} was read");
    }

    // The host allowed that host: any path there is read.
    let mut allowed = config.clone();
    allowed["oauth"]["allow_hosts"] = json!(["127.0.0.1"]);
    mcp.script(|s| s.resource_metadata = format!("{other}/admin"));
    let (_, message) = unsafe { connect_once(&allowed) }.unwrap_err();
    assert!(target.requests().iter().any(|r| r.path == "/admin"), "{message}");

    // The server's own origin at any path stays allowed (read, then found wanting).
    let before = mcp.server.requests().len();
    mcp.script(|s| s.resource_metadata = format!("{}/somewhere", s.me));
    let (_, message) = unsafe { connect_once(&config) }.unwrap_err();
    assert!(
        mcp.server.requests()[before..].iter().any(|r| r.path == "/somewhere"),
        "{message}"
    );
}
