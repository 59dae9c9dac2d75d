//! `mcp_config`: the connection settings builder. It holds the flat JSON object that
//! `ClientConfig::from_json` reads; the setters edit that object.

use super::boundary::{ffi_boundary, handle_mut, into_handle, out, take_handle, Handle};
use super::error::{mcp_error, Failure};
use super::status::mcp_status;
use super::strings::{arg_str, opt_json};
use serde_json::{json, Map, Value};
use std::ffi::c_char;

/// Era modes for `mcp_config_set_mode`.
pub const MCP_MODE_AUTO: i32 = 0;
pub const MCP_MODE_MODERN: i32 = 1;
pub const MCP_MODE_LEGACY: i32 = 2;

/// Environment modes for `mcp_config_set_env_mode`.
pub const MCP_ENV_INHERIT: i32 = 0;
pub const MCP_ENV_REPLACE: i32 = 1;
pub const MCP_ENV_ALLOWLIST: i32 = 2;

/// Connection settings. Not thread-safe: build it on one thread, then pass it to
/// `mcp_client_new`, which copies it.
pub struct mcp_config {
    pub(crate) settings: Map<String, Value>,
}

// SAFETY: crosses the ABI only as a `Box` made by `into_handle`, freed by `mcp_config_free`.
unsafe impl Handle for mcp_config {}

/// Creates settings from a JSON object (NULL: empty). The keys, their types, defaults and
/// meaning are in the JSON Schema `mcp_client.config.schema.json`, installed beside this header
/// and generated from the library's configuration types. In short: exactly one of `command`
/// (stdio: `args`, `env`, `env_mode`, `cwd`, `stderr_tail_lines`, `shutdown_grace_ms`) or `url`
/// (HTTP: `headers`, `bearer_token` or `oauth` (see `mcp_config_set_oauth`),
/// `allow_insecure_http`, `resolve`, `proxy`), and for both `mode`, `protocol_version`, `client_info`,
/// `capabilities`, `request_timeout_ms`, `probe_timeout_ms`, `connect_timeout_ms`,
/// `input_required_max_rounds`, `max_pages`, `max_message_bytes`, `skills` (see
/// `mcp_client_list_skills`), `tasks` (see `mcp_config_set_tasks`), `manual_input` (see
/// `mcp_config_set_manual_input`), `sampling_tools` (see `mcp_config_set_sampling_tools`), `apps`
/// (declares MCP Apps; see `mcp_client_read_app`),
/// `response_cache` (true; false turns response caching off),
/// `response_cache_max_entries` (512), `validate_output_schema` (true; see
/// `MCP_OUTPUT_SCHEMA_INVALID`), `span_tool_payloads` (false; true puts a `tools/call`'s
/// arguments and result in its span, see `mcp_client_on_span`), `tool_pinning` (`{"policy": "off" | "warn" | "block" | "ask",
/// "identity"?, "store_dir"?, "ignore_meta"?}`; see `mcp_client_tool_pins`) and the opt-in
/// `reconnect` policy (see `mcp_client_on_connection_state`). A null value counts as absent. An unknown key or a wrong
/// type makes `mcp_client_new` fail with `MCP_INVALID_ARG` and a message naming the key
/// (`unknown configuration key "x"`, `oauth.scopes: ...`). Free with `mcp_config_free`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_config_new(
    json: *const c_char,
    config_out: *mut *mut mcp_config,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let config_out = out(config_out, "config_out")?;
        let settings = match opt_json(json, "json")? {
            None => Map::new(),
            Some(Value::Object(m)) => m,
            Some(_) => return Err(Failure::invalid("the configuration must be a JSON object")),
        };
        *config_out = into_handle(mcp_config { settings });
        Ok(())
    })
}

fn edit(
    config: *mut mcp_config,
    f: impl FnOnce(&mut Map<String, Value>) -> Result<(), Failure>,
) -> Result<(), Failure> {
    f(&mut handle_mut(config, "config")?.settings)
}

/// Sets one setting to the value `value` computes (which may refuse the argument).
pub(crate) fn set(
    config: *mut mcp_config,
    key: &str,
    value: impl FnOnce() -> Result<Value, Failure>,
) -> Result<(), Failure> {
    edit(config, |s| {
        s.insert(key.into(), value()?);
        Ok(())
    })
}

/// Sets one string setting from a required C string argument.
fn set_string(config: *mut mcp_config, key: &str, value: *const c_char, name: &str) -> Result<(), Failure> {
    set(config, key, || Ok(json!(arg_str(value, name)?)))
}

/// The server command (stdio): a program name looked up in PATH, or a path.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_config_set_command(
    config: *mut mcp_config,
    command: *const c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, { set_string(config, "command", command, "command") })
}

/// Appends one argument for the server command.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_config_add_arg(
    config: *mut mcp_config,
    arg: *const c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        edit(config, |s| {
            let arg = arg_str(arg, "arg")?;
            match s.entry("args").or_insert_with(|| json!([])) {
                Value::Array(a) => a.push(json!(arg)),
                _ => return Err(Failure::invalid("args is not an array")),
            }
            Ok(())
        })
    })
}

/// Sets one environment variable for the server process.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_config_set_env(
    config: *mut mcp_config,
    name: *const c_char,
    value: *const c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        edit(config, |s| {
            let (name, value) = (arg_str(name, "name")?, arg_str(value, "value")?);
            crate::client::check_env_name(name).map_err(|e| Failure::invalid(e.message()))?;
            match s.entry("env").or_insert_with(|| json!({})) {
                Value::Object(m) => m.insert(name.into(), json!(value)),
                _ => return Err(Failure::invalid("env is not an object")),
            };
            Ok(())
        })
    })
}

/// Which of the host's environment variables the server process gets, besides those set with
/// `mcp_config_set_env`: `MCP_ENV_ALLOWLIST` (the default: only HOME, LOGNAME, PATH, SHELL,
/// TERM, USER, LANG and LC_*, skipping values that start with "()", so the host's secrets stay
/// out of servers), `MCP_ENV_INHERIT` (all of them: an explicit choice) or `MCP_ENV_REPLACE`
/// (none). JSON key `env_mode`: "allowlist", "inherit" or "replace".
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_config_set_env_mode(
    config: *mut mcp_config,
    mode: i32,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        edit(config, |s| {
            let mode = match mode {
                MCP_ENV_INHERIT => "inherit",
                MCP_ENV_REPLACE => "replace",
                MCP_ENV_ALLOWLIST => "allowlist",
                _ => return Err(Failure::invalid(format!("unknown environment mode {mode}"))),
            };
            s.insert("env_mode".into(), json!(mode));
            Ok(())
        })
    })
}

/// The server's working directory.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_config_set_cwd(
    config: *mut mcp_config,
    dir: *const c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, { set_string(config, "cwd", dir, "dir") })
}

/// The server URL (Streamable HTTP; http or https). A configuration has a URL or a command.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_config_set_url(
    config: *mut mcp_config,
    url: *const c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, { set_string(config, "url", url, "url") })
}

/// Adds an HTTP header sent with every request (HTTP transports).
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_config_add_header(
    config: *mut mcp_config,
    name: *const c_char,
    value: *const c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        edit(config, |s| {
            let (name, value) = (arg_str(name, "name")?, arg_str(value, "value")?);
            match s.entry("headers").or_insert_with(|| json!({})) {
                Value::Object(m) => m.insert(name.into(), json!(value)),
                _ => return Err(Failure::invalid("headers is not an object")),
            };
            Ok(())
        })
    })
}

/// A static bearer token, sent as `Authorization: Bearer <token>` on every HTTP request.
/// Tokens (this one, OAuth's, or an Authorization header) go over https, or over plain http
/// only to a loopback host (127.0.0.0/8, ::1, localhost): `mcp_client_new` refuses an
/// `http://` URL on another host unless the JSON key `allow_insecure_http` is true.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_config_set_bearer_token(
    config: *mut mcp_config,
    token: *const c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, { set_string(config, "bearer_token", token, "token") })
}

/// OAuth 2.1 authorization for an HTTP server (instead of a static bearer token):
/// `oauth_json` is a JSON object, checked by `mcp_client_new`. Keys (all optional):
/// `grant` ("authorization_code" or "client_credentials"); pre-registered or
/// client-credentials `client_id`, `client_secret`, `token_endpoint_auth_method`
/// ("client_secret_basic", "client_secret_post", "none", "private_key_jwt") and `issuer` (the
/// authorization server they belong to); `private_key_pem` and `signing_algorithm` (ES256,
/// ES384, RS256..., PS256..., EdDSA) for private_key_jwt. `issuer` is required with a
/// `client_secret` or `private_key_pem` (`MCP_INVALID_ARG` otherwise): they are sent on every
/// grant (authorization code, refresh, client credentials) to that authorization server only,
/// never to one a server's metadata names instead; `client_metadata_url` (a Client ID
/// Metadata Document, tried before dynamic registration); `client_name` and `application_type`
/// ("native", "web") for dynamic registration (deprecated by the 2026-07-28 specification in
/// favour of Client ID Metadata Documents; it keeps working as the last resort); `redirect_uri` (a redirect the host receives itself; the authorization
/// callback must reply), else the built-in listener on 127.0.0.1 (`loopback_port`, 0: any;
/// `loopback_path`, "/callback"); `scopes`; `offline_access` (true); `authorization_timeout_ms`
/// (300000, at most a day); `max_step_up` (2); `open_browser` (false: without an authorization
/// callback, an authorization-code flow then fails, since the authorization URL is never
/// logged); `allow_http` (false).
///
/// Where the flows go: the MCP server's 401 challenge and metadata name the URLs that are
/// fetched (protected resource and authorization server metadata, registration and token
/// endpoints), so each is checked first. https only (plain http when both the MCP URL and the
/// target are loopback, or with `allow_http` / the top-level `allow_insecure_http`); no
/// credentials in URLs; redirects are never followed; no proxy is used for them. Loopback,
/// private (10/8, 172.16/12, 192.168/16, fc00::/7), carrier-grade NAT (100.64/10),
/// link-local (169.254/16, fe80::/10, the cloud metadata service) and other special-purpose
/// addresses are refused, judged on every address a name resolves to and on IP literals,
/// unless the MCP URL's own host (an IP literal or localhost) is in that class. Host controls:
/// `allow_private_networks` (false: true opens loopback, private and carrier-grade NAT
/// addresses); `allow_hosts` and `deny_hosts`: arrays of host names, "*.domain", IP addresses
/// or ranges ("10.0.0.0/8"); an allowed host may have any address, a denied one is never
/// contacted (a range also matches resolved addresses). The MCP server's own origin is always
/// allowed; a `resource_metadata` the challenge names on another origin is fetched only at the
/// well-known path `/.well-known/oauth-protected-resource` (or below it) unless its host is in
/// `allow_hosts` (`MCP_AUTH_REQUIRED` otherwise, nothing fetched). Errors never quote what a fetched document says.
///
/// Authorization extensions (off unless set): `dpop` (true: DPoP, RFC 9449, with a P-256 key
/// generated for the client; or the host's key as `dpop_private_key_pem` (PKCS#8) or
/// `dpop_private_key_jwk`; the key never leaves the library); `grant` "jwt_bearer" (workload
/// identity federation: `workload_jwt`, or `workload_jwt_file` read again before every token
/// request, else `mcp_client_set_assertion_provider`); `grant` "enterprise" (enterprise-managed
/// authorization: `id_token` / `id_token_file` / the assertion provider, `idp_token_endpoint`,
/// `idp_client_id`, `idp_client_secret`, plus `client_id`, `client_secret` or
/// `private_key_pem`, and `issuer` for the MCP authorization server); `token_store_dir` (keep
/// credentials in 0600 files there, with an advisory lock so processes sharing it never spend
/// a refresh token twice). A refused grant fails with `MCP_AUTH_REQUIRED` and its OAuth error
/// code in `mcp_error_oauth_error`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_config_set_oauth(
    config: *mut mcp_config,
    oauth_json: *const c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        edit(config, |s| {
            match opt_json(oauth_json, "oauth_json")? {
                Some(v @ Value::Object(_)) => s.insert("oauth".into(), v),
                Some(_) => return Err(Failure::invalid("oauth_json must be a JSON object")),
                None => return Err(Failure::null("oauth_json")),
            };
            Ok(())
        })
    })
}

/// `MCP_MODE_AUTO` (default), `MCP_MODE_MODERN` or `MCP_MODE_LEGACY`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_config_set_mode(
    config: *mut mcp_config,
    mode: i32,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        edit(config, |s| {
            let mode = match mode {
                MCP_MODE_AUTO => "auto",
                MCP_MODE_MODERN => "modern",
                MCP_MODE_LEGACY => "legacy",
                _ => return Err(Failure::invalid(format!("unknown mode {mode}"))),
            };
            s.insert("mode".into(), json!(mode));
            Ok(())
        })
    })
}

/// Pins one protocol version (e.g. "2025-06-18"); its era follows. Overrides the mode.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_config_set_protocol_version(
    config: *mut mcp_config,
    version: *const c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, { set_string(config, "protocol_version", version, "version") })
}

/// The client's per-request timeout (see `MCP_TIMEOUT_DEFAULT`: 0 is the default, 60000 ms;
/// negative is none). (The JSON key `request_timeout_ms` keeps its own meaning: 0 is none.)
/// It also bounds a call's wait for a task (`mcp_config_set_tasks`) unless the call's options
/// set `timeout_ms`; a timeout's error message names which of the two expired.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_config_set_request_timeout_ms(
    config: *mut mcp_config,
    timeout_ms: i64,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        edit(config, |s| {
            match timeout_ms {
                0 => s.remove("request_timeout_ms"),
                t if t < 0 => s.insert("request_timeout_ms".into(), json!(0)),
                t => {
                    crate::client::timeout_ms("timeout_ms", t as u64).map_err(|e| Failure::invalid(e.message()))?;
                    s.insert("request_timeout_ms".into(), json!(t))
                }
            };
            Ok(())
        })
    })
}

/// How many `input_required` rounds are driven automatically (default 10).
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_config_set_input_required_max_rounds(
    config: *mut mcp_config,
    rounds: u32,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        set(config, "input_required_max_rounds", || Ok(json!(rounds)))
    })
}

/// Declares the skills extension (`io.modelcontextprotocol/skills`, SEP-2640) in the derived
/// capabilities (default false). Only a host that loads skills itself should: servers seeing it
/// stop offering their fallback tool for loading skills.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_config_set_skills(
    config: *mut mcp_config,
    enabled: bool,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, { set(config, "skills", || Ok(json!(enabled))) })
}

/// Declares `sampling.tools` (SEP-1577) with `sampling` (default false): sampling requests may
/// then offer `tools` and a `toolChoice`, which reach the handler of `mcp_client_on_sampling` in
/// its params JSON, and its answer may hold `tool_use` content. Same as the key `sampling_tools`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_config_set_sampling_tools(
    config: *mut mcp_config,
    enabled: bool,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, { set(config, "sampling_tools", || Ok(json!(enabled))) })
}

/// Frees settings. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn mcp_config_free(config: *mut mcp_config) {
    ffi_boundary!({ drop(take_handle(config)) })
}
