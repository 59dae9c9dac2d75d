//! Hostile servers against the authorization client, through
//! the C ABI's exported functions. The fixture server runs with `--oauth --oauth-hostile-auth
//! MODE` (`tests/fixture-server/src/oauth_hostile_auth.rs`): a malicious MCP server that is its
//! own authorization server, recording every request's credentials (`--record`).

mod common;

use ::mcp_client::ffi::auth::*;
use ::mcp_client::ffi::client::*;
use ::mcp_client::ffi::config::*;
use ::mcp_client::ffi::error::*;
use ::mcp_client::ffi::handlers::mcp_client_set_log_handler;
use ::mcp_client::ffi::responders::*;
use ::mcp_client::ffi::status::*;
use ::mcp_client::ffi::strings::mcp_string_free;
use base64::Engine;
use common::{fixture_bin, TempPath};
use std::ffi::{c_char, c_void, CStr, CString};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::ptr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn cstr(s: &str) -> CString {
    CString::new(s).unwrap()
}

unsafe fn text(p: *const c_char) -> String {
    CStr::from_ptr(p).to_string_lossy().into_owned()
}

/// The fixture in OAuth mode with a hostile variant; killed on drop.
struct Hostile {
    child: Child,
    url: String,
    record: TempPath,
}

impl Hostile {
    fn start(mode: &str, extra: &[&str]) -> Hostile {
        let record = TempPath::new("auth-hostile.jsonl");
        let mut child = Command::new(fixture_bin())
            .args(["--http", "127.0.0.1:0", "--oauth", "--oauth-hostile-auth", mode])
            .args(["--record", &record.as_string()])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the fixture");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("fixture: listening on ")
            .expect("the listening line")
            .to_string();
        Hostile { child, url, record }
    }

    /// The fixture's own issuer (its base URL).
    fn base(&self) -> String {
        self.url.strip_suffix("/mcp").unwrap().to_string()
    }

    /// Everything the fixture recorded, as one text.
    fn seen(&self) -> String {
        self.record.lines().join("\n")
    }

    /// The requests that reached `path` (an OAuth endpoint).
    fn hits(&self, path: &str) -> usize {
        self.record
            .lines()
            .iter()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| v["hostile_seen"]["path"].as_str().is_some_and(|p| p.starts_with(path)))
            .count()
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A client for `url` with `oauth`; Err: the status and message of `mcp_client_new`.
unsafe fn new_client(url: &str, oauth: &str) -> Result<*mut mcp_client, (mcp_status, String)> {
    let mut cfg = ptr::null_mut();
    let mut err = ptr::null_mut();
    let base = cstr(r#"{"mode":"modern","request_timeout_ms":15000}"#);
    assert_eq!(mcp_config_new(base.as_ptr(), &mut cfg, ptr::null_mut()), MCP_OK);
    assert_eq!(mcp_config_set_url(cfg, cstr(url).as_ptr(), ptr::null_mut()), MCP_OK);
    assert_eq!(mcp_config_set_oauth(cfg, cstr(oauth).as_ptr(), ptr::null_mut()), MCP_OK);
    let mut client = ptr::null_mut();
    let st = mcp_client_new(cfg, &mut client, &mut err);
    mcp_config_free(cfg);
    if st != MCP_OK {
        let message = text(mcp_error_message(err));
        mcp_error_free(err);
        return Err((st, message));
    }
    Ok(client)
}

unsafe fn connect(client: *mut mcp_client) -> Result<(), (mcp_status, String)> {
    let mut err = ptr::null_mut();
    let st = mcp_client_connect(client, ptr::null(), ptr::null_mut(), &mut err);
    if st == MCP_OK {
        return Ok(());
    }
    let out = (st, text(mcp_error_message(err)));
    mcp_error_free(err);
    Err(out)
}

unsafe fn echo(client: *mut mcp_client, what: &str) -> Result<String, (mcp_status, String)> {
    let (mut out, mut err) = (ptr::null_mut(), ptr::null_mut());
    let args = cstr(&format!(r#"{{"text":"{what}"}}"#));
    let st = mcp_client_call_tool(
        client,
        cstr("echo").as_ptr(),
        args.as_ptr(),
        ptr::null(),
        ptr::null(),
        ptr::null(),
        &mut out,
        &mut err,
    );
    if st != MCP_OK {
        let e = (st, text(mcp_error_message(err)));
        mcp_error_free(err);
        return Err(e);
    }
    let result = text(out);
    mcp_string_free(out);
    Ok(result)
}

// ---- host callbacks ----------------------------------------------------------------------

/// What the host saw: authorization URLs handed to it, redirects, log lines.
#[derive(Default)]
struct Seen {
    urls: Vec<String>,
    redirects: Vec<String>,
    logs: Vec<String>,
}

type Shared = Arc<Mutex<Seen>>;

fn userdata(seen: &Shared) -> *mut c_void {
    Arc::into_raw(seen.clone()) as *mut c_void
}

unsafe extern "C" fn release(ud: *mut c_void) {
    drop(Arc::from_raw(ud as *const Mutex<Seen>));
}

unsafe fn seen<'a>(ud: *mut c_void) -> &'a Mutex<Seen> {
    &*(ud as *const Mutex<Seen>)
}

unsafe extern "C" fn on_log(ud: *mut c_void, _level: *const c_char, source: *const c_char, message: *const c_char) {
    let line = format!("{}: {}", text(source), text(message));
    seen(ud).lock().unwrap().logs.push(line);
}

/// A headless browser: reads the authorization server's immediate redirect and replies with it.
unsafe extern "C" fn browse(ud: *mut c_void, url: *const c_char, _r: *const c_char, responder: *mut mcp_responder) {
    let mut location = ptr::null_mut();
    let st = mcp_auth_fetch_redirect(url, 5000, &mut location, ptr::null_mut());
    {
        let mut s = seen(ud).lock().unwrap();
        s.urls.push(text(url));
        if st == MCP_OK {
            s.redirects.push(text(location));
        }
    }
    if st != MCP_OK {
        let _ = mcp_responder_reply_error(responder, 0, cstr("no redirect").as_ptr(), ptr::null_mut());
        return;
    }
    let _ = mcp_responder_reply_url(responder, location, ptr::null_mut());
    mcp_string_free(location);
}

unsafe fn on_authorization(client: *mut mcp_client, seen: &Shared) {
    let st = mcp_client_on_authorization(client, Some(browse), userdata(seen), Some(release), ptr::null_mut());
    assert_eq!(st, MCP_OK);
}

unsafe fn on_logs(client: *mut mcp_client, seen: &Shared) {
    let st = mcp_client_set_log_handler(client, Some(on_log), userdata(seen), Some(release), ptr::null_mut());
    assert_eq!(st, MCP_OK);
}

// ---- 1. pre-registered secrets go only to the issuer the host named ------------------------

const SECRET: &str = "s3cret-for-the-real-as";

fn secret_absent(h: &Hostile) {
    let seen = h.seen();
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("svc:{SECRET}"));
    assert!(
        !seen.contains(SECRET) && !seen.contains(&basic),
        "the secret reached the server:\n{seen}"
    );
}

#[test]
fn a_server_naming_its_own_authorization_server_never_receives_the_secret() {
    let h = Hostile::start("own-as", &["--oauth-client", &format!("svc:{SECRET}")]);
    let trusted = "https://as.example.com";
    unsafe {
        // A secret (or key) without the issuer it belongs to is a configuration error.
        for oauth in [
            format!(r#"{{"grant":"client_credentials","client_id":"svc","client_secret":"{SECRET}"}}"#),
            format!(r#"{{"client_id":"svc","client_secret":"{SECRET}"}}"#),
        ] {
            let (st, message) = new_client(&h.url, &oauth).unwrap_err();
            assert_eq!(st, MCP_INVALID_ARG);
            assert!(message.contains("oauth.issuer"), "{message}");
        }

        // Client credentials for the trusted issuer: the server's own one gets nothing.
        let oauth = format!(
            r#"{{"grant":"client_credentials","client_id":"svc","client_secret":"{SECRET}","issuer":"{trusted}"}}"#
        );
        let client = new_client(&h.url, &oauth).unwrap();
        let (st, message) = connect(client).unwrap_err();
        assert_eq!(st, MCP_AUTH_REQUIRED, "{message}");
        assert!(message.contains("another authorization server"), "{message}");
        mcp_client_free(client);
        assert_eq!(h.hits("/token"), 0);

        // A refresh token the host's store holds for the server's issuer: not redeemed with
        // the secret either (the refresh grant is checked too).
        let client = new_client(&h.url, &oauth).unwrap();
        PLANTED.lock().unwrap().replace((h.base(), h.url.clone()));
        let st = mcp_client_set_token_store(
            client,
            Some(load_planted),
            Some(save_nothing),
            ptr::null_mut(),
            None,
            ptr::null_mut(),
        );
        assert_eq!(st, MCP_OK);
        assert!(connect(client).is_err());
        mcp_client_free(client);
        assert_eq!(h.hits("/token"), 0);

        // Authorization code with the pre-registered secret for the trusted issuer: the flow
        // goes on with a dynamic registration at the server's authorization server, without it.
        let oauth = format!(
            r#"{{"redirect_uri":"http://localhost:3000/callback","client_id":"svc","client_secret":"{SECRET}","issuer":"{trusted}"}}"#
        );
        let client = new_client(&h.url, &oauth).unwrap();
        let seen = Shared::default();
        on_authorization(client, &seen);
        connect(client).unwrap();
        assert!(echo(client, "hi").unwrap().contains("hi"));
        mcp_client_free(client);
        assert!(h.hits("/token") >= 1 && h.hits("/register") == 1);
        secret_absent(&h);

        // The control: named as the issuer, the fixture does receive the secret, so the record
        // would show it.
        let oauth = format!(
            r#"{{"grant":"client_credentials","client_id":"svc","client_secret":"{SECRET}","issuer":"{}"}}"#,
            h.base()
        );
        let client = new_client(&h.url, &oauth).unwrap();
        connect(client).unwrap();
        mcp_client_free(client);
        let basic = base64::engine::general_purpose::STANDARD.encode(format!("svc:{SECRET}"));
        assert!(h.seen().contains(&basic));
    }
}

static PLANTED: Mutex<Option<(String, String)>> = Mutex::new(None);

/// A store holding, for the server's issuer, an expired token with a refresh token.
unsafe extern "C" fn load_planted(_ud: *mut c_void, issuer: *const c_char, slot: *mut mcp_token_slot) {
    let Some((base, resource)) = PLANTED.lock().unwrap().clone() else {
        return;
    };
    if text(issuer) == base {
        let record = serde_json::json!({"tokens": {resource: {
            "access_token": "stale", "refresh_token": "rt-planted", "expires_at": 1}}});
        let _ = mcp_token_slot_set(slot, cstr(&record.to_string()).as_ptr(), ptr::null_mut());
    }
}

unsafe extern "C" fn save_nothing(_ud: *mut c_void, _issuer: *const c_char, _record: *const c_char) {}

// ---- 2. an absurd token lifetime ---------------------------------------------------------

#[test]
fn a_token_lifetime_of_2_to_the_64_neither_panics_nor_hangs() {
    let h = Hostile::start("expires-max", &[]);
    unsafe {
        let client = new_client(&h.url, r#"{"redirect_uri":"http://localhost:3000/callback"}"#).unwrap();
        let seen = Shared::default();
        on_authorization(client, &seen);
        let started = Instant::now();
        connect(client).unwrap();
        for i in 0..3 {
            assert!(echo(client, &format!("call {i}")).unwrap().contains("call"));
        }
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
        assert_eq!(seen.lock().unwrap().urls.len(), 1, "one authorization, token kept");
        mcp_client_free(client);
    }
}

// ---- 5. the token's audience is the server, not a parent path ------------------------------

#[test]
fn a_parent_path_resource_is_refused_before_authorizing() {
    let h = Hostile::start("parent-resource", &[]);
    unsafe {
        let client = new_client(&h.url, r#"{"redirect_uri":"http://localhost:3000/callback"}"#).unwrap();
        let seen = Shared::default();
        on_authorization(client, &seen);
        let (st, message) = connect(client).unwrap_err();
        assert_eq!(st, MCP_AUTH_REQUIRED, "{message}");
        assert!(message.contains("resource"), "{message}");
        mcp_client_free(client);
        assert!(
            seen.lock().unwrap().urls.is_empty(),
            "no authorization for a wider audience"
        );
        assert_eq!(h.hits("/authorize") + h.hits("/token") + h.hits("/register"), 0);
    }
}

// ---- 6. idle local connections to the loopback listener ----------------------------------

/// A browser that is not alone: three idle local connections and a stray request reach the
/// loopback listener first, then the real redirect. The callback returns without replying
/// (the listener receives the redirect).
unsafe extern "C" fn crowded_browser(
    ud: *mut c_void,
    url: *const c_char,
    redirect_uri: *const c_char,
    _responder: *mut mcp_responder,
) {
    let (url, redirect_uri) = (text(url), text(redirect_uri));
    seen(ud).lock().unwrap().urls.push(url.clone());
    std::thread::spawn(move || {
        let port: u16 = redirect_uri
            .strip_prefix("http://127.0.0.1:")
            .and_then(|r| r.split('/').next())
            .and_then(|p| p.parse().ok())
            .unwrap();
        let idle: Vec<TcpStream> = (0..3)
            .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
            .collect();
        assert!(get(port, "/callback?code=stolen&state=guess").starts_with("HTTP/1.1 400"));
        assert!(get(port, "/favicon.ico").starts_with("HTTP/1.1 404"));
        let mut location = ptr::null_mut();
        let st = unsafe { mcp_auth_fetch_redirect(cstr(&url).as_ptr(), 5000, &mut location, ptr::null_mut()) };
        assert_eq!(st, MCP_OK);
        let target = unsafe { text(location) };
        unsafe { mcp_string_free(location) };
        let path = target.split_once(&format!("127.0.0.1:{port}")).unwrap().1.to_string();
        assert!(get(port, &path).starts_with("HTTP/1.1 200"));
        drop(idle);
    });
}

fn get(port: u16, target: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(s, "GET {target} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n").unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

#[test]
fn idle_local_connections_do_not_stall_the_loopback_listener() {
    let h = Hostile::start("own-as", &[]);
    unsafe {
        // Each idle connection used to hold the listener for 10 s: three made this flow fail.
        let client = new_client(&h.url, r#"{"authorization_timeout_ms":8000}"#).unwrap();
        let seen = Shared::default();
        let st = mcp_client_on_authorization(
            client,
            Some(crowded_browser),
            userdata(&seen),
            Some(release),
            ptr::null_mut(),
        );
        assert_eq!(st, MCP_OK);
        let started = Instant::now();
        connect(client).unwrap();
        assert!(started.elapsed() < Duration::from_secs(6), "{:?}", started.elapsed());
        assert!(echo(client, "via loopback").unwrap().contains("via loopback"));
        mcp_client_free(client);
    }
}

// ---- 7. server text in logs; state, codes and tokens kept out -----------------------------

#[test]
fn server_text_is_escaped_and_secrets_stay_out_of_logs() {
    let h = Hostile::start("log-inject", &[]);
    unsafe {
        let client = new_client(&h.url, r#"{"redirect_uri":"http://localhost:3000/callback"}"#).unwrap();
        let seen = Shared::default();
        on_authorization(client, &seen);
        on_logs(client, &seen);
        connect(client).unwrap();
        assert!(echo(client, "hi").unwrap().contains("hi"));
        mcp_client_free(client);
        let seen = seen.lock().unwrap();
        let logs = seen.logs.join("\n");
        // The hostile issuer and client id were logged, escaped: no forged line.
        assert!(logs.contains("FORGED"), "{logs}");
        for line in &seen.logs {
            assert!(!line.contains(['\n', '\r', '\u{1b}']), "{line:?}");
        }
        // Neither the state, nor the code, nor the access token.
        let param = |url: &str, name: &str| {
            url::Url::parse(url)
                .unwrap()
                .query_pairs()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
                .unwrap()
        };
        let state = param(&seen.urls[0], "state");
        let code = param(&seen.redirects[0], "code");
        let token = h
            .record
            .lines()
            .iter()
            .find_map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).ok()?;
                v["hostile_seen"]["authorization"]
                    .as_str()?
                    .strip_prefix("Bearer ")
                    .map(str::to_string)
            })
            .expect("an MCP request with the token");
        for secret in [&state, &code, &token] {
            assert!(!logs.contains(secret.as_str()), "{secret} in the logs:\n{logs}");
        }
    }
}

#[test]
fn without_a_handler_the_authorization_url_is_not_logged() {
    let h = Hostile::start("own-as", &[]);
    unsafe {
        let client = new_client(&h.url, "{}").unwrap();
        let seen = Shared::default();
        on_logs(client, &seen);
        let started = Instant::now();
        let (st, message) = connect(client).unwrap_err();
        assert_eq!(st, MCP_AUTH_REQUIRED, "{message}");
        assert!(message.contains("open_browser"), "{message}");
        assert!(started.elapsed() < Duration::from_secs(5));
        mcp_client_free(client);
        let logs = seen.lock().unwrap().logs.join("\n");
        assert!(!logs.contains("state=") && !logs.contains("/authorize"), "{logs}");
        assert!(!message.contains("state="), "{message}");
    }
}
