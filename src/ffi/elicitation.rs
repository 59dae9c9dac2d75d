//! URL-mode elicitation and manual input in the C ABI: registering an elicitation
//! handler for chosen modes, and the error accessors for -32042's `data.elicitations` and for
//! the input requests no handler answers. The decisions live in `crate::client`.

use super::boundary::{ffi_boundary, handle_opt};
use super::client::{on_client, FfiClient};
use super::error::{borrow_str, mcp_error, Failure};
use super::handlers::{input_handler, mcp_input_fn, mcp_userdata_free_fn, Userdata};
use super::status::mcp_status;
use crate::client::{ElicitationModes, InputKind};
use std::ffi::{c_char, c_void};
use std::ptr;

/// Elicitation mode flag: form mode (`requestedSchema`, answered with `content`).
pub const MCP_ELICITATION_FORM: u32 = 1;
/// Elicitation mode flag: URL mode (the user opens `url` out of band; `accept` carries no
/// content, and the library drops any the handler gives).
pub const MCP_ELICITATION_URL: u32 = 2;

/// Registers the `elicitation/create` handler for `modes` (`MCP_ELICITATION_FORM`,
/// `MCP_ELICITATION_URL`, or both or-ed) and declares exactly those (`elicitation: {"url": {}}`
/// for URL mode alone). A request in another mode is not handed to `handler`: modern servers
/// that check capabilities answer -32021 (`MCP_CAPABILITY_MISSING`), lax ones get the call
/// failing with `MCP_INPUT_REQUIRED` listing it (`mcp_error_unanswered_json`), and legacy
/// servers get an error answer. URL-mode params are `{"mode":"url","message","url"}` (legacy
/// adds `elicitationId`; the completion then arrives as the notification
/// `notifications/elicitation/complete` on the notification listener). NULL `handler`
/// unregisters. `MCP_INVALID_ARG`, registering nothing, for unknown bits and for a handler that
/// could never be asked: no mode, or a mode the configuration's `capabilities` override does not
/// declare. `userdata_free` runs exactly once.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_on_elicitation_modes(
    client: *mut super::client::mcp_client,
    modes: u32,
    handler: mcp_input_fn,
    userdata: *mut c_void,
    userdata_free: mcp_userdata_free_fn,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        // Owned first, so `userdata_free` runs exactly once whatever happens below.
        let userdata = Userdata::new(userdata, userdata_free);
        on_client(client, move |fc: &FfiClient| {
            let all = MCP_ELICITATION_FORM | MCP_ELICITATION_URL;
            if modes & !all != 0 {
                return Err(Failure::invalid(format!(
                    "modes {modes:#x}: give MCP_ELICITATION_FORM, MCP_ELICITATION_URL or both"
                )));
            }
            let modes = ElicitationModes {
                form: modes & MCP_ELICITATION_FORM != 0,
                url: modes & MCP_ELICITATION_URL != 0,
            };
            let handler = handler.map(|callback| input_handler(fc, InputKind::Elicitation, callback, userdata));
            Ok(fc.client.set_elicitation_handler(handler, modes)?)
        })
    })
}

/// Manual input flag (`mcp_config_set_manual_input`): sampling.
pub const MCP_INPUT_SAMPLING: u32 = 4;
/// Manual input flag (`mcp_config_set_manual_input`): roots.
pub const MCP_INPUT_ROOTS: u32 = 8;

/// Manual input mode: declares the input kinds in `kinds` (`MCP_ELICITATION_FORM`,
/// `MCP_ELICITATION_URL`, `MCP_INPUT_SAMPLING`, `MCP_INPUT_ROOTS`, or-ed; 0: none) without a
/// handler, so servers that ask only for declared input (the official SDK servers answer
/// -32021 otherwise) send their `input_required` round; the call then fails with
/// `MCP_INPUT_REQUIRED` (`mcp_error_unanswered_json` lists what to answer) and the host retries
/// with `input_responses_json` and the `requestState`. The JSON key is `manual_input`: an array
/// of "elicitation", "elicitation.url", "sampling", "roots".
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_config_set_manual_input(
    config: *mut super::config::mcp_config,
    kinds: u32,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        super::config::set(config, "manual_input", || {
            let all = MCP_ELICITATION_FORM | MCP_ELICITATION_URL | MCP_INPUT_SAMPLING | MCP_INPUT_ROOTS;
            if kinds & !all != 0 {
                return Err(Failure::invalid(format!(
                    "manual input kinds {kinds:#x} has unknown bits"
                )));
            }
            let names = [
                (MCP_ELICITATION_FORM, "elicitation"),
                (MCP_ELICITATION_URL, "elicitation.url"),
                (MCP_INPUT_SAMPLING, "sampling"),
                (MCP_INPUT_ROOTS, "roots"),
            ];
            let list: Vec<&str> = names
                .iter()
                .filter(|(bit, _)| kinds & bit != 0)
                .map(|(_, n)| *n)
                .collect();
            Ok(serde_json::json!(list))
        })
    })
}

/// For `MCP_URL_ELICITATION_REQUIRED` (a legacy server's -32042): the `data.elicitations` array
/// as JSON, each `{"mode":"url","elicitationId","url","message"}`; show the URLs, then retry
/// the call. NULL otherwise. Borrowed, valid until `mcp_error_free`.
#[no_mangle]
pub unsafe extern "C" fn mcp_error_elicitations_json(error: *const mcp_error) -> *const c_char {
    ffi_boundary!({ handle_opt(error).map_or(ptr::null(), |e| borrow_str(&e.elicitations_json)) })
}

/// For `MCP_INPUT_REQUIRED`: the entries of `mcp_error_input_requests_json` that no registered
/// handler answers (key → request), as a JSON object — all of them in manual input mode (the
/// `manual_input` configuration key). `{}` for `MCP_INPUT_ROUNDS_EXCEEDED`; NULL otherwise.
/// Borrowed, valid until `mcp_error_free`.
#[no_mangle]
pub unsafe extern "C" fn mcp_error_unanswered_json(error: *const mcp_error) -> *const c_char {
    ffi_boundary!({ handle_opt(error).map_or(ptr::null(), |e| borrow_str(&e.unanswered_json)) })
}
