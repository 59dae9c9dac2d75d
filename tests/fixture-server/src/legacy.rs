//! The legacy era (2024-11-05 … 2025-11-25): `initialize` handshake and a
//! session; no `resultType` on results.

use crate::config::{LEGACY_LATEST, LEGACY_VERSIONS};
use crate::server::{level_rank, server_info, Ctx, INSTRUCTIONS};
use crate::wire::{self, Reply, RpcError};
use crate::{catalog, skills, tools};
use serde_json::{json, Map, Value};

const METHODS: [&str; 13] = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "logging/setLevel",
    "completion/complete",
];

/// The version answered to an `initialize` asking for `requested`.
pub fn negotiate(requested: &str) -> &'static str {
    LEGACY_VERSIONS
        .iter()
        .find(|v| **v == requested)
        .copied()
        .unwrap_or(LEGACY_LATEST)
}

pub fn handle(ctx: &Ctx, method: &str, params: &Map<String, Value>) -> Reply {
    // Includes server/discover and subscriptions/listen, like real legacy servers.
    let mode = ctx.srv.cfg.skills;
    if !METHODS.contains(&method) && !skills::handles(mode, method) {
        return RpcError::method_not_found().into();
    }
    if method != "initialize" && method != "ping" && !ctx.session().initialized {
        return RpcError::new(wire::NOT_INITIALIZED, "Server not initialized").into();
    }
    match method {
        "initialize" => initialize(ctx, params),
        "ping" => Reply::Result(Map::new()),
        "tools/list" => catalog::list_reply(ctx, params, "tools", crate::redefine::listed(ctx)),
        "tools/call" => tools::call(ctx, params),
        "prompts/list" => catalog::list_reply(ctx, params, "prompts", catalog::prompts()),
        "prompts/get" => catalog::get_prompt(ctx, params),
        "resources/list" => catalog::list_reply(ctx, params, "resources", catalog::resources()),
        "resources/templates/list" => catalog::list_reply(ctx, params, "resourceTemplates", catalog::templates()),
        "resources/read" => catalog::read_resource(ctx, params),
        "resources/subscribe" | "resources/unsubscribe" => subscribe(ctx, method, params),
        "logging/setLevel" => set_level(ctx, params),
        "completion/complete" => catalog::complete(params),
        _ => match mode {
            Some(mode) => skills::handle(ctx, mode, method, params),
            None => RpcError::method_not_found().into(),
        },
    }
}

fn initialize(ctx: &Ctx, params: &Map<String, Value>) -> Reply {
    let Some(requested) = params.get("protocolVersion").and_then(Value::as_str) else {
        return RpcError::invalid_params("Missing required parameter: protocolVersion").into();
    };
    let caps = match params.get("capabilities") {
        None => Map::new(),
        Some(Value::Object(c)) => c.clone(),
        Some(_) => return RpcError::invalid_params("capabilities must be an object").into(),
    };
    let version = negotiate(requested);
    {
        let mut session = ctx.session();
        session.initialized = true;
        session.client_capabilities = caps;
    }
    eprintln!("fixture: legacy initialize, client asked {requested}, answering {version}");
    let mut body = json!({
        "protocolVersion": version,
        "capabilities": {
            "tools": {"listChanged": true},
            "prompts": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": true},
            "logging": {},
            "completions": {},
        },
        "serverInfo": server_info(),
        "instructions": INSTRUCTIONS,
    });
    skills::declare(ctx.srv.cfg.skills, &mut body["capabilities"]);
    Reply::Result(body.as_object().cloned().unwrap_or_default())
}

fn subscribe(ctx: &Ctx, method: &str, params: &Map<String, Value>) -> Reply {
    let Some(uri) = params.get("uri").and_then(Value::as_str) else {
        return RpcError::invalid_params("Missing required parameter: uri").into();
    };
    let mut session = ctx.session();
    if method == "resources/subscribe" {
        session.subscriptions.insert(uri.to_string());
    } else {
        session.subscriptions.remove(uri);
    }
    Reply::Result(Map::new())
}

fn set_level(ctx: &Ctx, params: &Map<String, Value>) -> Reply {
    match params.get("level").and_then(Value::as_str) {
        Some(level) if level_rank(level).is_some() => {
            ctx.session().log_level = Some(level.to_string());
            Reply::Result(Map::new())
        }
        _ => RpcError::invalid_params("Invalid log level").into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_negotiation() {
        assert_eq!(negotiate("2024-11-05"), "2024-11-05");
        assert_eq!(negotiate("2025-06-18"), "2025-06-18");
        assert_eq!(negotiate("2026-07-28"), "2025-11-25");
        assert_eq!(negotiate("bogus"), "2025-11-25");
    }
}
