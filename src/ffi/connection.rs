//! The connection-state listener (`mcp_client_on_connection_state`), for the opt-in reconnect
//! policy (the `reconnect` configuration key).

use super::boundary::ffi_boundary;
use super::client::on_client;
use super::error::mcp_error;
use super::handlers::{mcp_userdata_free_fn, Userdata};
use super::status::mcp_status;
use super::strings::to_c;
use crate::client::ConnectionState;
use std::ffi::{c_char, c_void};
use std::sync::Arc;

/// A connect succeeded (the first one, and each reconnect).
pub const MCP_CONNECTION_CONNECTED: i32 = 1;
/// The connection was lost (the server exited, the HTTP server went away); `detail` says why.
pub const MCP_CONNECTION_DISCONNECTED: i32 = 2;
/// Reconnect attempt `attempt` (1-based) starts.
pub const MCP_CONNECTION_RECONNECTING: i32 = 3;
/// Every attempt of the policy failed; `detail` is the last error. The next call starts over.
pub const MCP_CONNECTION_FAILED: i32 = 4;

/// A connection-state listener: `state` is an `MCP_CONNECTION_*` value, `attempt` the reconnect
/// attempt (0 outside `MCP_CONNECTION_RECONNECTING`), `detail` a message (empty when none),
/// borrowed for the callback's duration. Runs on the dispatcher thread, in order.
pub type mcp_connection_state_fn =
    Option<unsafe extern "C" fn(userdata: *mut c_void, state: i32, attempt: u32, detail: *const c_char)>;

/// Sets (NULL: removes) the connection-state listener. `userdata_free` runs exactly once.
/// Without a `reconnect` policy in the configuration only `MCP_CONNECTION_CONNECTED` is
/// reported; with one, a lost connection is `MCP_CONNECTION_DISCONNECTED`, then one
/// `MCP_CONNECTION_RECONNECTING` per attempt, then `MCP_CONNECTION_CONNECTED` or
/// `MCP_CONNECTION_FAILED`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_on_connection_state(
    client: *mut super::client::mcp_client,
    listener: mcp_connection_state_fn,
    userdata: *mut c_void,
    userdata_free: mcp_userdata_free_fn,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let userdata = Userdata::new(userdata, userdata_free);
        on_client(client, move |fc| {
            let listener = listener.map(|f| {
                let dispatcher = fc.dispatcher.clone();
                Arc::new(move |state: &ConnectionState| {
                    let (code, attempt, detail) = match state {
                        ConnectionState::Connected => (MCP_CONNECTION_CONNECTED, 0, String::new()),
                        ConnectionState::Disconnected(why) => (MCP_CONNECTION_DISCONNECTED, 0, why.clone()),
                        ConnectionState::Reconnecting(n) => (MCP_CONNECTION_RECONNECTING, *n, String::new()),
                        ConnectionState::Failed(why) => (MCP_CONNECTION_FAILED, 0, why.clone()),
                    };
                    let (ud, detail) = (userdata.clone(), to_c(detail));
                    dispatcher.post(Box::new(move || {
                        // SAFETY: host callback; `detail` borrowed for its duration.
                        unsafe { f(ud.ptr(), code, attempt, detail.as_ptr()) }
                    }));
                }) as crate::client::ConnectionStateFn
            });
            fc.client.on_connection_state(listener);
            Ok(())
        })
    })
}
