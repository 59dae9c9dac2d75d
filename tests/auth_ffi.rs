//! The OAuth C ABI, driven from Rust through the exported functions: the authorization
//! callback and its responder (reply, defer, fail, return without replying), the token store
//! callbacks, the error accessors, the configuration setter and the redirect helper.

mod auth_support;

use ::mcp_client::ffi::auth::*;
use ::mcp_client::ffi::client::*;
use ::mcp_client::ffi::config::*;
use ::mcp_client::ffi::error::*;
use ::mcp_client::ffi::responders::*;
use ::mcp_client::ffi::status::*;
use ::mcp_client::ffi::strings::mcp_string_free;
use auth_support::{Iss, Knobs, World};
use std::collections::HashMap;
use std::ffi::{c_char, c_void, CStr, CString};
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

fn cstr(s: &str) -> CString {
    CString::new(s).unwrap()
}

unsafe fn text(p: *const c_char) -> String {
    CStr::from_ptr(p).to_string_lossy().into_owned()
}

/// A client for `url` with `oauth` set through `mcp_config_set_oauth`.
unsafe fn new_client(url: &str, oauth: &str) -> Result<*mut mcp_client, (mcp_status, String)> {
    let mut cfg = ptr::null_mut();
    let mut err = ptr::null_mut();
    let base = cstr(r#"{"mode":"modern","request_timeout_ms":10000}"#);
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

/// Connects; on failure the status, message, HTTP status and challenge.
unsafe fn connect(client: *mut mcp_client) -> Result<(), (mcp_status, String, Option<u16>, Option<String>)> {
    let mut err = ptr::null_mut();
    let st = mcp_client_connect(client, ptr::null(), ptr::null_mut(), &mut err);
    if st == MCP_OK {
        return Ok(());
    }
    let mut http = 0u16;
    let has_http = mcp_error_http_status(err, &mut http);
    let challenge = mcp_error_www_authenticate(err);
    let out = (
        st,
        text(mcp_error_message(err)),
        has_http.then_some(http),
        (!challenge.is_null()).then(|| text(challenge)),
    );
    mcp_error_free(err);
    Err(out)
}

// ---- callbacks ---------------------------------------------------------------------------

static CALLS: AtomicUsize = AtomicUsize::new(0);

fn calls() -> *mut c_void {
    &CALLS as *const AtomicUsize as *mut c_void
}
static FREED: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn count_free(_ud: *mut c_void) {
    FREED.fetch_add(1, Ordering::SeqCst);
}

struct SendPtr(*mut mcp_responder);
unsafe impl Send for SendPtr {}

/// Defers, then answers from another thread with the redirect read by the helper. `ud`: an
/// `AtomicUsize` counting the calls, or NULL.
unsafe extern "C" fn deferring(
    ud: *mut c_void,
    url: *const c_char,
    redirect_uri: *const c_char,
    responder: *mut mcp_responder,
) {
    if let Some(calls) = (ud as *const AtomicUsize).as_ref() {
        calls.fetch_add(1, Ordering::SeqCst);
    }
    assert_eq!(text(redirect_uri), "http://localhost:3000/callback");
    assert!(!mcp_responder_is_cancelled(responder));
    mcp_responder_defer(responder);
    let (url, r) = (text(url), SendPtr(responder));
    std::thread::spawn(move || {
        let r = r;
        let mut location = ptr::null_mut();
        let st = mcp_auth_fetch_redirect(cstr(&url).as_ptr(), 5000, &mut location, ptr::null_mut());
        assert_eq!(st, MCP_OK);
        assert_eq!(mcp_responder_reply_url(r.0, location, ptr::null_mut()), MCP_OK);
        mcp_string_free(location);
    });
}

unsafe extern "C" fn failing(_ud: *mut c_void, _url: *const c_char, _r: *const c_char, responder: *mut mcp_responder) {
    let _ = mcp_responder_reply_error(
        responder,
        0,
        cstr("the user closed the browser").as_ptr(),
        ptr::null_mut(),
    );
}

/// Answers the authorization with a JSON result, the input handlers' reply: refused as the wrong
/// kind (the status is kept for the test in `WRONG_KIND`), which ends the flow.
static WRONG_KIND: AtomicUsize = AtomicUsize::new(usize::MAX);

unsafe extern "C" fn wrong_kind(
    _ud: *mut c_void,
    _url: *const c_char,
    _r: *const c_char,
    responder: *mut mcp_responder,
) {
    let st = mcp_responder_reply_json(responder, cstr("{}").as_ptr(), ptr::null_mut());
    WRONG_KIND.store(st as usize, Ordering::SeqCst);
}

/// What the callback stored, once it has: the refused reply ends the flow, so the connect can
/// return while the callback (on the dispatcher thread) has yet to store what the reply said.
fn stored(slot: &AtomicUsize) -> usize {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while slot.load(Ordering::SeqCst) == usize::MAX && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    slot.load(Ordering::SeqCst)
}

unsafe extern "C" fn silent(_ud: *mut c_void, _url: *const c_char, _r: *const c_char, _responder: *mut mcp_responder) {}

/// The token store: issuer → record JSON.
static STORE: Mutex<Option<HashMap<String, String>>> = Mutex::new(None);
static LOADS: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn load(_ud: *mut c_void, issuer: *const c_char, slot: *mut mcp_token_slot) {
    LOADS.fetch_add(1, Ordering::SeqCst);
    let found = STORE
        .lock()
        .unwrap()
        .as_ref()
        .and_then(|m| m.get(&text(issuer)).cloned());
    if let Some(record) = found {
        assert_eq!(
            mcp_token_slot_set(slot, cstr(&record).as_ptr(), ptr::null_mut()),
            MCP_OK
        );
    }
    // Garbage is refused without touching the slot.
    assert_eq!(
        mcp_token_slot_set(slot, cstr("{nope").as_ptr(), ptr::null_mut()),
        MCP_INVALID_JSON
    );
    assert_eq!(
        mcp_token_slot_set(slot, cstr("[1]").as_ptr(), ptr::null_mut()),
        MCP_INVALID_ARG
    );
}

unsafe extern "C" fn save(_ud: *mut c_void, issuer: *const c_char, record: *const c_char) {
    let mut store = STORE.lock().unwrap();
    let map = store.get_or_insert_with(HashMap::new);
    if record.is_null() {
        map.remove(&text(issuer));
    } else {
        map.insert(text(issuer), text(record));
    }
}

// ---- tests -------------------------------------------------------------------------------

const OAUTH: &str = r#"{"redirect_uri":"http://localhost:3000/callback"}"#;

#[test]
fn authorization_callback_token_store_and_error_accessors() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let w = rt.block_on(World::start(Knobs::default()));
    unsafe {
        // A deferred responder answered from another thread; credentials saved per issuer.
        let client = new_client(&w.mcp_url(), OAUTH).unwrap();
        assert_eq!(
            mcp_client_on_authorization(client, Some(deferring), calls(), Some(count_free), ptr::null_mut()),
            MCP_OK
        );
        assert_eq!(
            mcp_client_set_token_store(
                client,
                Some(load),
                Some(save),
                ptr::null_mut(),
                Some(count_free),
                ptr::null_mut()
            ),
            MCP_OK
        );
        connect(client).unwrap();
        assert_eq!(CALLS.load(Ordering::SeqCst), 1);
        let record = STORE.lock().unwrap().as_ref().unwrap()[&w.issuer()].clone();
        let record: serde_json::Value = serde_json::from_str(&record).unwrap();
        assert!(record["tokens"][w.mcp_url()]["access_token"].is_string(), "{record}");
        let freed = FREED.load(Ordering::SeqCst);
        mcp_client_free(client);
        assert_eq!(FREED.load(Ordering::SeqCst), freed + 2, "each userdata_free runs once");

        // A new client with the same store: loaded, no authorization callback.
        let client = new_client(&w.mcp_url(), OAUTH).unwrap();
        assert_eq!(
            mcp_client_on_authorization(client, Some(deferring), calls(), None, ptr::null_mut()),
            MCP_OK
        );
        assert_eq!(
            mcp_client_set_token_store(client, Some(load), Some(save), ptr::null_mut(), None, ptr::null_mut()),
            MCP_OK
        );
        let loads = LOADS.load(Ordering::SeqCst);
        connect(client).unwrap();
        assert_eq!(CALLS.load(Ordering::SeqCst), 1);
        assert!(LOADS.load(Ordering::SeqCst) > loads);
        mcp_client_free(client);

        // Half a store is refused, and its userdata is still released.
        let client = new_client(&w.mcp_url(), OAUTH).unwrap();
        let freed = FREED.load(Ordering::SeqCst);
        let st = mcp_client_set_token_store(
            client,
            Some(load),
            None,
            ptr::null_mut(),
            Some(count_free),
            ptr::null_mut(),
        );
        assert_eq!((st, FREED.load(Ordering::SeqCst)), (MCP_INVALID_ARG, freed + 1));

        // A host that fails the responder: MCP_AUTH_REQUIRED with the challenge and status.
        assert_eq!(
            mcp_client_on_authorization(client, Some(failing), ptr::null_mut(), None, ptr::null_mut()),
            MCP_OK
        );
        let (st, message, http, challenge) = connect(client).unwrap_err();
        assert_eq!(st, MCP_AUTH_REQUIRED);
        assert!(message.contains("the user closed the browser"), "{message}");
        assert_eq!(http, Some(401));
        assert!(challenge.unwrap().contains("resource_metadata="));
        mcp_client_free(client);

        // A callback that returns without replying or deferring ends the flow.
        let client = new_client(&w.mcp_url(), OAUTH).unwrap();
        assert_eq!(
            mcp_client_on_authorization(client, Some(silent), ptr::null_mut(), None, ptr::null_mut()),
            MCP_OK
        );
        let (st, message, _, _) = connect(client).unwrap_err();
        assert_eq!(st, MCP_AUTH_REQUIRED);
        assert!(message.contains("without replying"), "{message}");
        mcp_client_free(client);

        // One responder type, two kinds of answer: a JSON result for an authorization is refused
        // (MCP_INVALID_ARG to the callback) and fails the flow instead of hanging it.
        let client = new_client(&w.mcp_url(), OAUTH).unwrap();
        assert_eq!(
            mcp_client_on_authorization(client, Some(wrong_kind), ptr::null_mut(), None, ptr::null_mut()),
            MCP_OK
        );
        let (st, message, _, _) = connect(client).unwrap_err();
        assert_eq!(st, MCP_AUTH_REQUIRED);
        assert!(message.contains("mcp_responder_reply_url"), "{message}");
        assert_eq!(stored(&WRONG_KIND), MCP_INVALID_ARG as usize);
        mcp_client_free(client);
    }
}

#[test]
fn refusals_configuration_and_the_helper() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let w = rt.block_on(World::start(Knobs {
        iss: Iss::Wrong,
        ..Knobs::default()
    }));
    unsafe {
        // A wrong iss: refused, and no token request was made.
        let client = new_client(&w.mcp_url(), OAUTH).unwrap();
        assert_eq!(
            mcp_client_on_authorization(client, Some(deferring), ptr::null_mut(), None, ptr::null_mut()),
            MCP_OK
        );
        let (st, message, _, _) = connect(client).unwrap_err();
        assert_eq!(st, MCP_AUTH_REQUIRED);
        assert!(message.contains("iss"), "{message}");
        assert!(w.token_requests().is_empty());
        mcp_client_free(client);

        // Bad configurations fail at mcp_client_new.
        for bad in [
            r#"{"grant":"password"}"#,
            r#"{"client_metadata_url":"http://insecure.example/c.json"}"#,
            r#"{"private_key_pem":"not a key","client_id":"x"}"#,
        ] {
            let (st, _) = new_client(&w.mcp_url(), bad).unwrap_err();
            assert_eq!(st, MCP_INVALID_ARG, "{bad}");
        }
        let mut cfg = ptr::null_mut();
        let _ = mcp_config_new(ptr::null(), &mut cfg, ptr::null_mut());
        assert_eq!(
            mcp_config_set_oauth(cfg, cstr("[]").as_ptr(), ptr::null_mut()),
            MCP_INVALID_ARG
        );
        assert_eq!(mcp_config_set_oauth(cfg, ptr::null(), ptr::null_mut()), MCP_NULL_ARG);
        mcp_config_free(cfg);

        // The helper wants a redirect.
        let mut out = ptr::null_mut();
        let mut err = ptr::null_mut();
        let st = mcp_auth_fetch_redirect(cstr(&w.mcp_url()).as_ptr(), 2000, &mut out, &mut err);
        assert_ne!(st, MCP_OK);
        assert!(out.is_null());
        mcp_error_free(err);
        assert_eq!(
            mcp_auth_fetch_redirect(ptr::null(), 0, &mut out, ptr::null_mut()),
            MCP_NULL_ARG
        );

        // Accessors on NULL and on errors without HTTP details.
        let mut status = 0u16;
        assert!(!mcp_error_http_status(ptr::null(), &mut status));
        assert!(mcp_error_www_authenticate(ptr::null()).is_null());
        assert_eq!(
            mcp_responder_reply_url(ptr::null_mut(), ptr::null(), ptr::null_mut()),
            MCP_NULL_ARG
        );
        assert_eq!(
            mcp_responder_reply_error(ptr::null_mut(), 0, ptr::null(), ptr::null_mut()),
            MCP_NULL_ARG
        );
        assert!(mcp_responder_is_cancelled(ptr::null()));
        mcp_responder_defer(ptr::null_mut());
    }
}
