//! Reading a host's MCP configuration file, as the host wrote it, into a [`HubSpec`].
//!
//! Three shapes are read: `mcpServers` (Claude Desktop, Claude Code's `.mcp.json`, Cursor), and
//! `servers` with a top-level `inputs` array (VS Code's `.vscode/mcp.json`), with comments and
//! trailing commas (JSONC). Each entry becomes a member ([`entry`]); variables are expanded
//! ([`vars`]) with what the host supplies ([`ReadContext`]). A problem in one entry makes that
//! member `failed` ([`HubSpec::failed`]); only a file that cannot be read as a whole is an error.

mod context;
mod entry;
mod envfile;
mod jsonc;
mod vars;

pub use context::{InputAnswers, InputPrompt, ReadContext};

use super::spec::HubSpec;
use crate::error::{Error, ErrorKind, Result};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use vars::{Expander, Input};

/// A configuration file larger than this is refused (such files hold a few kilobytes).
const MAX_FILE_BYTES: u64 = 16 << 20;
/// The top-level keys whose objects hold server entries.
const SERVER_KEYS: &[&str] = &["mcpServers", "servers"];

impl HubSpec {
    /// Reads a host's configuration file (`claude_desktop_config.json`, `.mcp.json`, Cursor's
    /// `mcp.json`, `.vscode/mcp.json`). A relative `envFile` starts at the context's workspace
    /// folder, else at the file's folder.
    ///
    /// Errors (kind `InvalidArgument`, or `Io` when the file cannot be read) are about the file
    /// as a whole: not JSON (with comments), no `mcpServers` or `servers` object, a malformed
    /// `inputs` array, a server name given twice. A problem in one entry (an unset variable, a
    /// declined input, a bad setting) is that member's, in [`HubSpec::failed`].
    pub fn from_file(path: impl AsRef<Path>, ctx: &ReadContext) -> Result<HubSpec> {
        let path = path.as_ref();
        let io = |e: std::io::Error| Error::new(ErrorKind::Io, format!("{}: {e}", path.display()));
        let mut text = String::new();
        std::fs::File::open(path)
            .map_err(io)?
            .take(MAX_FILE_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(io)?;
        if text.len() as u64 > MAX_FILE_BYTES {
            return Err(Error::invalid(format!(
                "{}: a configuration file of more than {} MiB",
                path.display(),
                MAX_FILE_BYTES >> 20
            )));
        }
        let base = ctx.workspace_folder.as_deref().or(path.parent());
        read(&text, ctx, base, &path.display().to_string())
    }

    /// Reads a configuration file's text (see [`HubSpec::from_file`]); a relative `envFile`
    /// starts at the context's workspace folder, else at the process's working directory.
    pub fn from_text(text: &str, ctx: &ReadContext) -> Result<HubSpec> {
        read(text, ctx, ctx.workspace_folder.as_deref(), "the configuration")
    }

    /// Adds one server entry, in any host's form (`{"command": …}`, `{"type": "http", "url": …}`,
    /// with `env`, `headers`, `disabled`, `mcp_client` …), as member `name` (last in order).
    /// Variables are expanded as in a file; there are no declared inputs, so an `${input:…}` is
    /// an error. Other hosts' keys are added to [`HubSpec::warnings`].
    ///
    /// Unlike a file's entries, an entry that cannot be built is this call's error and is not
    /// added; so is an empty name or one the spec already has.
    pub fn add_entry(&mut self, name: &str, entry: &Value, ctx: &ReadContext) -> Result<()> {
        let taken = self.members.iter().any(|m| m.name == name) || self.failed.iter().any(|(n, _)| n == name);
        if name.is_empty() || taken {
            return Err(Error::invalid(match taken {
                true => format!("a server named {name:?} is already in the configuration"),
                false => "a server's name must not be empty".to_string(),
            }));
        }
        let no_inputs = HashMap::new();
        let mut vars = Expander::new(ctx, &no_inputs);
        let mut foreign = Vec::new();
        let mut reading = entry::Reading {
            vars: &mut vars,
            base_dir: ctx.workspace_folder.as_deref(),
            foreign: &mut foreign,
        };
        let member = reading
            .member(name, entry)
            .map_err(|m| Error::invalid(member_error(name, &m, &vars)))?;
        self.members.push(member);
        self.warnings.extend(foreign.iter().map(warning));
        Ok(())
    }
}

/// A whole file's text into a spec; `origin` names it in errors.
fn read(text: &str, ctx: &ReadContext, base_dir: Option<&Path>, origin: &str) -> Result<HubSpec> {
    // Editors on Windows may start the file with a byte order mark.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let top: Value = serde_json::from_str(&jsonc::strip(text)).map_err(|e| {
        Error::invalid(format!(
            "{origin} is not JSON (comments and trailing commas allowed): {e}"
        ))
    })?;
    let Value::Object(top) = top else {
        return Err(Error::invalid(format!("{origin} must be a JSON object")));
    };
    let inputs = inputs(&top)?;
    let mut entries: Vec<(&String, &Value)> = Vec::new();
    for key in top.keys().filter(|k| SERVER_KEYS.contains(&k.as_str())) {
        let Value::Object(servers) = &top[key] else {
            return Err(Error::invalid(format!("{key} must be a JSON object of servers")));
        };
        for (name, entry) in servers {
            if entries.iter().any(|(n, _)| *n == name) {
                return Err(Error::invalid(format!("server {name:?} is named twice")));
            }
            entries.push((name, entry));
        }
    }
    if !SERVER_KEYS.iter().any(|k| top.contains_key(*k)) {
        return Err(Error::invalid(format!(
            "{origin} has no \"mcpServers\" or \"servers\" object"
        )));
    }
    let mut spec = HubSpec::default();
    let mut vars = Expander::new(ctx, &inputs);
    let mut foreign = Vec::new();
    for (name, entry) in entries {
        let mut reading = entry::Reading {
            vars: &mut vars,
            base_dir,
            foreign: &mut foreign,
        };
        let member = match name.is_empty() {
            true => Err("a server's name must not be empty".to_string()),
            false => reading.member(name, entry),
        };
        match member {
            Ok(member) => spec.members.push(member),
            Err(m) => spec.failed.push((name.clone(), member_error(name, &m, &vars))),
        }
    }
    spec.warnings = foreign.iter().map(warning).collect();
    spec.warnings.extend(unasked(&inputs));
    Ok(spec)
}

/// The top-level `inputs` array (VS Code) by id.
fn inputs(top: &Map<String, Value>) -> Result<HashMap<String, Input>> {
    let mut inputs = HashMap::new();
    let items = match top.get("inputs") {
        None | Some(Value::Null) => return Ok(inputs),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(Error::invalid("inputs must be an array")),
    };
    for (i, item) in items.iter().enumerate() {
        let text = |key: &str| item.get(key).and_then(Value::as_str).map(str::to_string);
        let (Some(id), Some(kind)) = (text("id"), text("type")) else {
            return Err(Error::invalid(format!(
                "inputs[{i}]: an input is an object with a string \"id\" and \"type\""
            )));
        };
        let input = Input {
            options: options(item, &kind).map_err(|m| Error::invalid(format!("inputs[{i}] ({id:?}): {m}")))?,
            kind,
            description: text("description").unwrap_or_default(),
            password: item.get("password").and_then(Value::as_bool).unwrap_or(false),
            default: text("default"),
        };
        if inputs.insert(id.clone(), input).is_some() {
            return Err(Error::invalid(format!("inputs[{i}]: input {id:?} is declared twice")));
        }
    }
    Ok(inputs)
}

/// A `pickString`'s `options`: strings, or VS Code's `{"label", "value"}` objects (the value is
/// the answer); none for other types.
fn options(item: &Value, kind: &str) -> std::result::Result<Vec<String>, &'static str> {
    if kind != "pickString" {
        return Ok(Vec::new());
    }
    let bad = || "a \"pickString\" input needs \"options\": a non-empty array of strings or {\"value\"} objects";
    let items = item
        .get("options")
        .and_then(Value::as_array)
        .filter(|o| !o.is_empty())
        .ok_or_else(bad)?;
    items
        .iter()
        .map(|o| {
            o.as_str()
                .or_else(|| o.get("value").and_then(Value::as_str))
                .map(str::to_string)
                .ok_or_else(bad)
        })
        .collect()
}

/// The warnings about declared inputs this library cannot ask (a `command` input runs an
/// editor command); a server that uses one is `failed`.
fn unasked(inputs: &HashMap<String, Input>) -> Vec<String> {
    let mut ids: Vec<(&String, &Input)> = inputs
        .iter()
        .filter(|(_, i)| !vars::ASKED_KINDS.contains(&i.kind.as_str()))
        .collect();
    ids.sort_by_key(|(id, _)| *id);
    ids.into_iter()
        .map(|(id, i)| match i.kind.as_str() {
            "command" => format!(
                "input {id:?} is a \"command\" input: it runs an editor command, which a library cannot; servers that use it fail"
            ),
            kind => format!("input {id:?} has type {kind:?}, which this library does not ask; servers that use it fail"),
        })
        .collect()
}

/// A member's error as the host sees it: the server named, no input's answer in it.
fn member_error(name: &str, message: &str, vars: &Expander<'_>) -> String {
    let mut message = format!("server {name:?}: {message}");
    for answer in vars.answers() {
        message = message.replace(answer, "<redacted>");
    }
    message
}

/// The warning about another host's key.
fn warning((key, servers): &(String, Vec<String>)) -> String {
    let servers: Vec<String> = servers.iter().map(|s| format!("{s:?}")).collect();
    format!(
        "key {key:?} is another host's and is ignored (on {})",
        servers.join(", ")
    )
}
