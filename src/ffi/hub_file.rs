//! `mcp_hub` from a host's configuration file (`crate::hub`'s `HubSpec::from_file` /
//! `from_text`): creating a hub, reloading it, its warnings. The reading itself, variables
//! and `${input:…}` included, is `hub::file`'s; this only carries the host's read options.

use super::boundary::{arg_opt, ffi_boundary, handle, handle_mut, into_handle, out, Borrowable};
use super::error::{mcp_error, Failure};
use super::hub::mcp_hub;
use super::status::{mcp_status, MCP_INVALID_ARG, MCP_NULL_ARG, MCP_OK};
use super::strings::{arg_str, give_json, opt_str};
use crate::hub::{HubSpec, InputAnswers, InputPrompt, ReadContext};
use serde_json::Value;
use std::ffi::{c_char, c_void};

/// The newest `mcp_hub_read_opts` layout this header describes (grows as `mcp_call_opts` does).
pub const MCP_HUB_READ_OPTS_VERSION: u32 = 1;

/// Asked for one `${input:id}` of a VS Code `inputs` array while a file is read: `id`,
/// `description` and `default_value` (NULL when the input has none) are borrowed for the call;
/// `password` asks the host to mask what the user types. Call `mcp_hub_input_slot_set(slot,
/// answer)` during the callback to answer (the library copies the answer, uses it as typed and
/// never logs it nor shows it in an error); leaving the slot empty declines, which makes the
/// servers that use the input `failed`. A `pickString` input offers a choice: its options are
/// `mcp_hub_input_slot_options_json(slot, …)`, and an answer outside them fails the servers
/// that use the input. Called on the thread that reads the file, at most once
/// per id and read, before the reading call returns. A hub keeps the answers of the reads that
/// made and reloaded it: a reload asks only for inputs that are new, declared differently, or
/// were declined before.
pub type mcp_hub_input_fn = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        id: *const c_char,
        description: *const c_char,
        password: bool,
        default_value: *const c_char,
        slot: *mut mcp_hub_input_slot,
    ),
>;

/// How a configuration file is read. Initialise with `mcp_hub_read_opts_init`, then set
/// fields; NULL where a function takes one means the defaults. Every pointer is borrowed for
/// the duration of the call only.
#[repr(C)]
pub struct mcp_hub_read_opts {
    /// The layout version, set by `mcp_hub_read_opts_init`; do not change it.
    pub version: u32,
    /// The folder `${workspaceFolder}` stands for, where a relative `envFile` starts (default:
    /// none: `${workspaceFolder}` is then an error of the servers that use it, and `envFile`
    /// starts at the file's folder, or the working directory for text).
    pub workspace_folder: *const c_char,
    /// The folder `${userHome}` stands for (default: the `HOME` environment variable).
    pub user_home: *const c_char,
    /// Asks the user for an `${input:id}` (default: none; an `${input:…}` is then an error of
    /// the servers that use it).
    pub on_input: mcp_hub_input_fn,
    /// Handed to `on_input`; the library never frees it.
    pub input_userdata: *mut c_void,
}

/// Fills `opts` with defaults for layout `version` (pass `MCP_HUB_READ_OPTS_VERSION`).
/// `MCP_INVALID_ARG` for a version this library does not know: `opts` is left unchanged.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_hub_read_opts_init(opts: *mut mcp_hub_read_opts, version: u32) -> mcp_status {
    ffi_boundary!({
        if !(1..=MCP_HUB_READ_OPTS_VERSION).contains(&version) {
            return MCP_INVALID_ARG;
        }
        let Ok(opts) = out(opts, "opts") else {
            return MCP_NULL_ARG;
        };
        *opts = mcp_hub_read_opts {
            version: MCP_HUB_READ_OPTS_VERSION,
            workspace_folder: std::ptr::null(),
            user_home: std::ptr::null(),
            on_input: None,
            input_userdata: std::ptr::null_mut(),
        };
        MCP_OK
    })
}

/// Where an input callback puts the answer. Valid only during that callback.
pub struct mcp_hub_input_slot {
    answer: Option<String>,
    options: Vec<String>,
}

// SAFETY: never boxed: the slot lives on the library's stack during the input callback, the
// only time the host may pass it back (`mcp_hub_input_slot_set` only borrows it).
unsafe impl Borrowable for mcp_hub_input_slot {}

/// Answers the input an input callback was asked for (copied; may be empty). Only valid inside
/// the callback.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_hub_input_slot_set(
    slot: *mut mcp_hub_input_slot,
    answer: *const c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let slot = handle_mut(slot, "slot")?;
        slot.answer = Some(arg_str(answer, "answer")?.to_string());
        Ok(())
    })
}

/// The options of the input an input callback was asked for, as a JSON array of strings: a
/// `pickString`'s choices (answer with one of them), empty (`[]`) for a `promptString`, which
/// takes free text. Free with `mcp_string_free`. Only valid inside the callback.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_hub_input_slot_options_json(
    slot: *const mcp_hub_input_slot,
    options_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let slot = handle(slot, "slot")?;
        out(options_json_out, "options_json_out")?;
        give_json(options_json_out, &serde_json::json!(slot.options));
        Ok(())
    })
}

/// The host's input callback, used only on the reading thread while the read runs.
struct InputCallback {
    callback:
        unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char, bool, *const c_char, *mut mcp_hub_input_slot),
    userdata: *mut c_void,
}

// SAFETY: the context holding it lives only for one read, on the calling thread, which is the
// thread the header says the callback runs on; the library never reads through `userdata`.
unsafe impl Send for InputCallback {}
// SAFETY: as for `Send`.
unsafe impl Sync for InputCallback {}

impl InputCallback {
    fn ask(&self, input: &InputPrompt) -> Option<String> {
        let text = |s: &str| super::strings::to_c(s);
        let (id, description) = (text(&input.id), text(&input.description));
        let default = input.default.as_deref().map(text);
        let mut slot = mcp_hub_input_slot {
            answer: None,
            options: input.options.clone(),
        };
        // SAFETY: host callback; the strings and the slot are valid for its duration.
        unsafe {
            (self.callback)(
                self.userdata,
                id.as_ptr(),
                description.as_ptr(),
                input.password,
                default.as_ref().map_or(std::ptr::null(), |d| d.as_ptr()),
                &mut slot,
            )
        };
        slot.answer
    }
}

/// The read context of `read` (NULL: the defaults), keeping its input answers in `answers`.
fn read_context(read: *const mcp_hub_read_opts, answers: &InputAnswers) -> Result<ReadContext, Failure> {
    let mut ctx = ReadContext::new().remember(answers);
    let Some(o) = arg_opt(read) else {
        return Ok(ctx);
    };
    if !(1..=MCP_HUB_READ_OPTS_VERSION).contains(&o.version) {
        return Err(Failure::invalid(
            "mcp_hub_read_opts has an unknown version: initialise it with mcp_hub_read_opts_init",
        ));
    }
    if let Some(folder) = opt_str(o.workspace_folder, "workspace_folder")? {
        ctx = ctx.workspace_folder(folder);
    }
    if let Some(home) = opt_str(o.user_home, "user_home")? {
        ctx = ctx.user_home(home);
    }
    if let Some(callback) = o.on_input {
        let input = InputCallback {
            callback,
            userdata: o.input_userdata,
        };
        ctx = ctx.prompt(move |prompt| input.ask(prompt));
    }
    Ok(ctx)
}

/// Where a configuration comes from: a file's path or its text.
enum Source {
    File,
    Text,
}

/// Reads `arg` (a path or a text, as `source` says) into a spec.
fn read_spec(
    source: Source,
    arg: *const c_char,
    read: *const mcp_hub_read_opts,
    answers: &InputAnswers,
) -> Result<HubSpec, Failure> {
    let ctx = read_context(read, answers)?;
    Ok(match source {
        Source::File => HubSpec::from_file(arg_str(arg, "path")?, &ctx)?,
        Source::Text => HubSpec::from_text(arg_str(arg, "text")?, &ctx)?,
    })
}

fn new_from(
    source: Source,
    arg: *const c_char,
    options_json: *const c_char,
    read: *const mcp_hub_read_opts,
    hub_out: *mut *mut mcp_hub,
) -> Result<(), Failure> {
    let hub_out = out(hub_out, "hub_out")?;
    let answers = InputAnswers::new();
    let spec = read_spec(source, arg, read, &answers)?;
    let mut hub = mcp_hub::create(spec, options_json)?;
    hub.input_answers = answers;
    *hub_out = into_handle(hub);
    Ok(())
}

/// Creates a hub of the servers of a host's configuration file at `path`: `mcpServers`
/// (`claude_desktop_config.json`, `.mcp.json`, Cursor's `mcp.json`) or `servers` and `inputs`
/// (VS Code's `.vscode/mcp.json`), comments and trailing commas allowed. `options_json` as for
/// `mcp_hub_new`; `read` (may be NULL) supplies the workspace folder, the user's home and the
/// input callback, which runs on this thread before this call returns. Entries that cannot be
/// built (an unset variable, a declined input, a refused setting) are members in state
/// `failed` with an error naming the server and the key; other hosts' keys are listed by
/// `mcp_hub_warnings_json`. Only a file that cannot be read as a whole fails this call
/// (`MCP_IO`, or `MCP_INVALID_ARG`: not JSON, no server object, a name given twice). Nothing
/// starts until `mcp_hub_start`. Free with `mcp_hub_free`. Any thread.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_hub_new_from_file(
    path: *const c_char,
    options_json: *const c_char,
    read: *const mcp_hub_read_opts,
    hub_out: *mut *mut mcp_hub,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, { new_from(Source::File, path, options_json, read, hub_out) })
}

/// `mcp_hub_new_from_file` for the file's `text` (a relative `envFile` starts at the
/// workspace folder, else at the working directory). Any thread.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_hub_new_from_text(
    text: *const c_char,
    options_json: *const c_char,
    read: *const mcp_hub_read_opts,
    hub_out: *mut *mut mcp_hub,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, { new_from(Source::Text, text, options_json, read, hub_out) })
}

fn reload_from(
    hub: *mut mcp_hub,
    source: Source,
    arg: *const c_char,
    read: *const mcp_hub_read_opts,
    report_out: *mut *mut c_char,
) -> Result<(), Failure> {
    let h = handle(hub, "hub")?;
    h.check()?;
    let spec = read_spec(source, arg, read, &h.input_answers)?;
    let report = h.block_on(h.hub().reload(spec))?;
    if !report_out.is_null() {
        give_json(report_out, &report.to_json());
    }
    Ok(())
}

/// Reads the configuration file at `path` again (as `mcp_hub_new_from_file`, `read` may be
/// NULL) and applies it: members new in the file are added and started, members no longer in
/// it are closed, members whose entry changed (or that had failed) are closed and started
/// again, and the others keep their connections and caches. The warnings become the file's.
/// Inputs answered by earlier reads of this hub, declared the same way, are not asked again.
/// Returns once every started member has connected or failed. `report_json_out` (may be NULL)
/// receives `{"added", "removed", "restarted", "unchanged"}`, arrays of member names; free it
/// with `mcp_string_free`. A file that cannot be read as a whole fails this call and changes
/// nothing. Any thread; not from a callback.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_hub_reload_from_file(
    hub: *mut mcp_hub,
    path: *const c_char,
    read: *const mcp_hub_read_opts,
    report_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, { reload_from(hub, Source::File, path, read, report_json_out) })
}

/// `mcp_hub_reload_from_file` for the file's `text`. Any thread; not from a callback.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_hub_reload_from_text(
    hub: *mut mcp_hub,
    text: *const c_char,
    read: *const mcp_hub_read_opts,
    report_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, { reload_from(hub, Source::Text, text, read, report_json_out) })
}

/// The configuration's warnings as a JSON array of strings: keys other hosts define that this
/// library ignores (`autoApprove`, `alwaysAllow`, …), each once with the servers it is on.
/// Empty for a hub made with `mcp_hub_new`. Free with `mcp_string_free`. Any thread, callbacks
/// included.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_hub_warnings_json(
    hub: *const mcp_hub,
    warnings_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let h = handle(hub, "hub")?;
        h.check()?;
        out(warnings_json_out, "warnings_json_out")?;
        let warnings = h.hub().warnings().into_iter().map(Value::String).collect();
        give_json(warnings_json_out, &Value::Array(warnings));
        Ok(())
    })
}
