//! One server entry of a host's file onto a [`MemberSpec`]: the host's keys (`type`, `command`,
//! `args`, `env`, `envFile`, `cwd`, `url`, `headers`, `disabled`) mapped onto the flat
//! single-client configuration, this library's own settings taken from the `mcp_client` key,
//! other hosts' keys set aside for a warning.

use super::envfile;
use super::vars::Expander;
use crate::client::ClientConfig;
use crate::config::parse_key;
use crate::hub::spec::{MemberSpec, ToolFilter};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::path::Path;

/// The key holding this library's own settings for one server.
pub(super) const OWN_KEY: &str = "mcp_client";

/// The host keys this library reads; any other key of an entry is another host's.
const HOST_KEYS: &[&str] = &[
    "type", "command", "args", "env", "envFile", "cwd", "url", "headers", "disabled", OWN_KEY,
];
/// The host keys copied onto the single-client configuration as they are (after expansion).
const COPIED: &[&str] = &["command", "args", "env", "cwd", "url", "headers"];
/// The hub's own settings under [`OWN_KEY`] (the rest of it is single-client configuration).
const HUB_KEYS: &[&str] = &["tools", "lazy", "max_concurrency"];

/// `tools` under [`OWN_KEY`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Tools {
    allow: Option<Vec<String>>,
    #[serde(default)]
    deny: Vec<String>,
}

/// Where a read is and what it has seen so far.
pub(super) struct Reading<'a, 'c> {
    pub vars: &'a mut Expander<'c>,
    /// Where a relative `envFile` path starts.
    pub base_dir: Option<&'a Path>,
    /// Other hosts' keys, each with the servers it was found on, in order of first sight.
    pub foreign: &'a mut Vec<(String, Vec<String>)>,
}

impl Reading<'_, '_> {
    /// The member of entry `name`; an error is the member's message, without the server's name.
    pub fn member(&mut self, name: &str, entry: &Value) -> Result<MemberSpec, String> {
        let Value::Object(entry) = entry else {
            return Err("the entry must be a JSON object".into());
        };
        for key in entry.keys().filter(|k| !HOST_KEYS.contains(&k.as_str())) {
            match self.foreign.iter_mut().find(|(k, _)| k == key) {
                Some((_, servers)) => servers.push(name.to_string()),
                None => self.foreign.push((key.clone(), vec![name.to_string()])),
            }
        }
        let enabled = match entry.get("disabled") {
            None | Some(Value::Null) => true,
            Some(Value::Bool(disabled)) => !disabled,
            Some(_) => return Err("disabled: expected true or false".into()),
        };
        // A disabled entry is taken as written: nothing is asked or checked until it is enabled.
        let mut client = Map::new();
        let kind = transport(entry)?;
        for key in COPIED {
            if let Some(value) = entry.get(*key).filter(|v| !v.is_null()) {
                client.insert(key.to_string(), self.expand(enabled, key, value)?);
            }
        }
        if let Some(path) = entry.get("envFile").filter(|v| !v.is_null()) {
            if enabled {
                self.env_file(&mut client, path)?;
            }
        }
        let own = match entry.get(OWN_KEY) {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(own)) => own.clone(),
            Some(_) => return Err(format!("{OWN_KEY}: expected a JSON object")),
        };
        let mut member = MemberSpec {
            name: name.to_string(),
            enabled,
            client: Value::Null,
            tools: ToolFilter::default(),
            lazy: false,
            max_concurrency: None,
        };
        for (key, value) in own.iter().filter(|(_, v)| !v.is_null()) {
            let path = format!("{OWN_KEY}.{key}");
            match key.as_str() {
                "tools" => {
                    let tools: Tools = parse_key(&path, value).map_err(|e| e.message().to_string())?;
                    member.tools = ToolFilter {
                        allow: tools.allow,
                        deny: tools.deny,
                    };
                }
                "lazy" => member.lazy = parse_key(&path, value).map_err(|e| e.message().to_string())?,
                "max_concurrency" => match parse_key::<u32>(&path, value).map_err(|e| e.message().to_string())? {
                    0 => return Err(format!("{path}: at least 1 (leave it out for no cap)")),
                    n => member.max_concurrency = Some(n),
                },
                _ if COPIED.contains(&key.as_str()) => {
                    return Err(format!(
                        "{path}: set {key:?} on the entry itself, not under {OWN_KEY:?}"
                    ))
                }
                _ => {
                    client.insert(key.clone(), self.expand(enabled, &path, value)?);
                }
            }
        }
        let pinned = ["mode", "protocol_version"].iter().any(|k| client.contains_key(*k));
        if kind == Kind::Sse && !pinned {
            // HTTP+SSE is what a legacy connect falls back to when the server refuses the
            // Streamable HTTP `initialize`; `legacy` skips the modern probe such a server cannot answer.
            client.insert("mode".into(), Value::from("legacy"));
        }
        member.client = Value::Object(client);
        if enabled {
            ClientConfig::from_json(&member.client).map_err(|e| located(e.message(), &own))?;
        }
        Ok(member)
    }

    /// `value` with variables expanded in every string inside it (not in object keys).
    fn expand(&mut self, enabled: bool, path: &str, value: &Value) -> Result<Value, String> {
        if !enabled {
            return Ok(value.clone());
        }
        Ok(match value {
            Value::String(s) => Value::String(self.vars.expand(s).map_err(|e| format!("{path}: {e}"))?),
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| self.expand(enabled, &format!("{path}[{i}]"), v))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Object(obj) => Value::Object(
                obj.iter()
                    .map(|(k, v)| Ok((k.clone(), self.expand(enabled, &format!("{path}.{k}"), v)?)))
                    .collect::<Result<_, String>>()?,
            ),
            other => other.clone(),
        })
    }

    /// Adds the variables of the `envFile` to `env` (the entry's own `env` wins).
    fn env_file(&mut self, client: &mut Map<String, Value>, path: &Value) -> Result<(), String> {
        let Value::String(path) = path else {
            return Err("envFile: expected a string".into());
        };
        if !client.contains_key("command") {
            return Err("envFile applies to a \"command\", not a \"url\"".into());
        }
        let path = self.vars.expand(path).map_err(|e| format!("envFile: {e}"))?;
        let path = match self.base_dir {
            Some(base) => base.join(&path),
            None => path.into(),
        };
        let text = std::fs::read_to_string(&path).map_err(|e| format!("envFile {}: {e}", path.display()))?;
        let vars = envfile::parse(&text).map_err(|e| format!("envFile {}: {e}", path.display()))?;
        let mut env: Map<String, Value> = vars.into_iter().map(|(k, v)| (k, Value::String(v))).collect();
        match client.remove("env") {
            Some(Value::Object(own)) => env.extend(own),
            Some(other) => {
                client.insert("env".into(), other);
                return Ok(()); // not an object: the configuration parser says so
            }
            None => {}
        }
        client.insert("env".into(), Value::Object(env));
        Ok(())
    }
}

/// How the entry reaches its server.
#[derive(PartialEq)]
enum Kind {
    Stdio,
    Http,
    Sse,
}

/// The entry's transport from `type`, or from whether it has a `url` (HTTP) or not (stdio).
fn transport(entry: &Map<String, Value>) -> Result<Kind, String> {
    let has = |key: &str| entry.get(key).is_some_and(|v| !v.is_null());
    let (kind, needs) = match entry.get("type") {
        None | Some(Value::Null) if has("url") => return Ok(Kind::Http),
        None | Some(Value::Null) => return Ok(Kind::Stdio),
        Some(Value::String(t)) => match t.as_str() {
            "stdio" => (Kind::Stdio, "command"),
            "http" | "streamable-http" | "streamableHttp" => (Kind::Http, "url"),
            "sse" => (Kind::Sse, "url"),
            other => {
                return Err(format!(
                    "type: unknown transport {other:?} (expected \"stdio\", \"http\", \"streamable-http\" or \"sse\")"
                ))
            }
        },
        Some(_) => return Err("type: expected a string".into()),
    };
    match has(needs) {
        true => Ok(kind),
        false => Err(format!(
            "type {:?} needs a {needs:?}",
            entry["type"].as_str().unwrap_or_default()
        )),
    }
}

/// The single-client parser's message, with `mcp_client.` before a key that came from there.
fn located(message: &str, own: &Map<String, Value>) -> String {
    if message.starts_with("unknown ") && message.contains(" key ") {
        // Every key copied from the entry is a known one, and the nested settings objects
        // (`oauth`, `reconnect`) come from the namespaced key: an unknown key is always its.
        return format!("{OWN_KEY}: {message}");
    }
    let first = message.split([':', '.']).next().unwrap_or_default();
    match own.contains_key(first) && !HUB_KEYS.contains(&first) {
        true => format!("{OWN_KEY}.{message}"),
        false => message.to_string(),
    }
}
