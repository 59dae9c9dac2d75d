//! The skills extension (SEP-2640) in the C ABI: list, get, and the verified read of a skill
//! file. The checks themselves live in `crate::client` (`skills.rs`).

use super::boundary::ffi_boundary;
use super::client::{call, mcp_client};
use super::error::{mcp_error, Failure};
use super::opts::mcp_call_opts;
use super::status::mcp_status;
use super::strings::{arg_str, opt_json_object, opt_str};
use crate::client::Reply;
use std::ffi::c_char;

/// Every page of `skills/list`, checked against the extension's structural rules:
/// `{"skills": [entry, ...], "rejected": [{"uri", "reason", "entry"}, ...]}`. An entry is
/// `{"uri", "frontmatter", "resources": [{"uri", "digest", "size"}] | "dynamic"}`; hold it to
/// read the skill's files with `mcp_client_read_skill_file`. No skill file is read here.
/// `MCP_UNSUPPORTED` when the server did not declare `io.modelcontextprotocol/skills` (nothing
/// is sent then). A skill's identity is (this server, `uri`): never key skills by `uri` alone.
/// Set `"skills": true` in the configuration to declare the extension to servers. Bounded by
/// the `max_pages` setting. Any thread; not from a callback. Free the result with
/// `mcp_string_free`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_list_skills(
    client: *mut mcp_client,
    opts: *const mcp_call_opts,
    result_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        call(client, opts, result_json_out, |c, ro| {
            Ok(async move { c.list_skills(&ro).await.map(Reply::from) })
        })
    })
}

/// `skills/get` for the `SKILL.md` URI `uri` (listed or not). Result: the checked entry JSON.
/// `MCP_SKILL_VERIFICATION_FAILED` when the entry breaks the structural rules or is another
/// skill's; `MCP_JSONRPC_ERROR` (-32602) for a URI the server does not serve; `MCP_UNSUPPORTED`
/// as for `mcp_client_list_skills`. Any thread; not from a callback.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_get_skill(
    client: *mut mcp_client,
    uri: *const c_char,
    opts: *const mcp_call_opts,
    result_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        call(client, opts, result_json_out, |c, ro| {
            let uri = arg_str(uri, "uri")?;
            Ok(async move { c.get_skill(uri, &ro).await.map(Reply::from) })
        })
    })
}

/// Reads one file of a skill with `resources/read` and verifies it against `entry_json` (an
/// entry from `mcp_client_list_skills` or `mcp_client_get_skill`). `file_uri` NULL reads the
/// entry's `SKILL.md`, which is how a skill is loaded. Only files the entry lists are read (a
/// `"dynamic"` skill: files below its root, at most 16 MiB). The content's bytes (the UTF-8 of
/// `text`, or the decoded `blob`) must have the listed `size`, then the listed SHA-256 `digest`;
/// a `SKILL.md`'s YAML frontmatter must equal the entry's `frontmatter` key by key. Result: the
/// verified content item JSON `{"uri", "mimeType"?, "text" | "blob"}`. Any mismatch, or a file
/// the entry does not list, is `MCP_SKILL_VERIFICATION_FAILED` (the message says which check)
/// and nothing is returned: do not use the content; refresh the entry once with
/// `mcp_client_get_skill` and ask the user to approve again if its files changed. Nothing is
/// cached. Any thread; not from a callback.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_read_skill_file(
    client: *mut mcp_client,
    entry_json: *const c_char,
    file_uri: *const c_char,
    opts: *const mcp_call_opts,
    result_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        call(client, opts, result_json_out, |c, ro| {
            let entry = opt_json_object(entry_json, "entry_json")?.ok_or_else(|| Failure::null("entry_json"))?;
            let file_uri = opt_str(file_uri, "file_uri")?;
            Ok(async move { c.read_skill_file(&entry, file_uri, &ro).await.map(Reply::from) })
        })
    })
}
