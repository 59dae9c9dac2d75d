//! A proxy from the environment would resolve the names the MCP server chose itself, out of the
//! address guard's sight (docs/network-safety.md, "What is fetched"): the authorization client uses
//! none. Its own test binary, because it sets the process's proxy variables.

#[path = "http_support/mod.rs"]
mod http_support;

use ::mcp_client::ffi::client::*;
use ::mcp_client::ffi::config::*;
use ::mcp_client::ffi::error::*;
use ::mcp_client::ffi::status::*;
use http_support::{Reply, Request, Server};
use serde_json::json;
use std::ffi::{CStr, CString};
use std::ptr;

#[test]
fn the_authorization_client_uses_no_proxy() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (proxy, auth) = rt.block_on(async {
        let proxy = Server::start(|_req| async { Reply::status(502) }).await;
        let auth = Server::start(|req: Request| async move {
            if req.path == "/.well-known/oauth-authorization-server" {
                Reply::json(json!({"issuer": "x"}))
            } else {
                Reply::status(404)
            }
        })
        .await;
        (proxy, auth)
    });
    let issuer = format!("http://as.test:{}", auth.addr.port());
    let mcp = rt.block_on(async {
        let issuer = issuer.clone();
        Server::start(move |req: Request| {
            let issuer = issuer.clone();
            async move {
                if req.path.starts_with("/.well-known/oauth-protected-resource") {
                    let host = req.header("host").unwrap_or_default().to_string();
                    Reply::json(json!({"resource": format!("http://{host}/mcp"), "authorization_servers": [issuer]}))
                } else {
                    Reply::json_status(401, json!({})).with_header("www-authenticate", "Bearer")
                }
            }
        })
        .await
    });
    for var in [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ] {
        std::env::set_var(var, proxy.url(""));
    }
    // The MCP server itself is reached directly, so the test is about the authorization client.
    std::env::set_var("NO_PROXY", "mcp.test");
    std::env::set_var("no_proxy", "mcp.test");

    let config = json!({
        "url": format!("http://mcp.test:{}/mcp", mcp.addr.port()),
        "mode": "modern",
        "request_timeout_ms": 10000,
        "allow_insecure_http": true,
        "resolve": {"mcp.test": "127.0.0.1", "as.test": "127.0.0.1"},
        "oauth": {"allow_hosts": ["as.test"]},
    });
    let json = CString::new(config.to_string()).unwrap();
    unsafe {
        let (mut cfg, mut client, mut err) = (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
        assert_eq!(mcp_config_new(json.as_ptr(), &mut cfg, ptr::null_mut()), MCP_OK);
        assert_eq!(mcp_client_new(cfg, &mut client, ptr::null_mut()), MCP_OK);
        mcp_config_free(cfg);
        let st = mcp_client_connect(client, ptr::null(), ptr::null_mut(), &mut err);
        let message = CStr::from_ptr(mcp_error_message(err)).to_string_lossy().into_owned();
        mcp_error_free(err);
        mcp_client_free(client);
        assert_eq!(st, MCP_AUTH_REQUIRED, "{message}");
    }
    assert!(!mcp.requests().is_empty());
    assert!(
        auth.requests()
            .iter()
            .any(|r| r.path == "/.well-known/oauth-authorization-server"),
        "the authorization server was asked directly"
    );
    assert_eq!(proxy.connections(), 0, "{:?}", proxy.summary());
}
