//! The modern era (2026-07-28): stateless requests validated by `_meta`.

use crate::config::Config;
use crate::server::{Ctx, INSTRUCTIONS, META_CLIENT_CAPABILITIES, META_LOG_LEVEL, META_PROTOCOL_VERSION};
use crate::wire::{self, Reply, RpcError};
use crate::{catalog, listen, skills, tasks, tools};
use serde_json::{json, Map, Value};

pub const METHODS: [&str; 10] = [
    "server/discover",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "completion/complete",
    "subscriptions/listen",
];

/// The -32022 error, listing what the server supports.
pub fn unsupported_version(cfg: &Config, requested: Option<&Value>) -> RpcError {
    version_error(cfg.error_supported_versions(), requested)
}

fn version_error(supported: Vec<String>, requested: Option<&Value>) -> RpcError {
    RpcError::new(wire::UNSUPPORTED_VERSION, "Unsupported protocol version").with_data(json!({
        "supported": supported,
        "requested": requested.cloned().unwrap_or(Value::Null),
    }))
}

/// Checks the request `_meta` every modern request must carry. Over HTTP
/// each of these errors is answered with status 400.
pub fn meta_error(cfg: &Config, params: &Map<String, Value>) -> Option<RpcError> {
    check_meta(cfg, params).map(RpcError::bad_request)
}

fn check_meta(cfg: &Config, params: &Map<String, Value>) -> Option<RpcError> {
    let missing = |key: &str| Some(RpcError::invalid_params(format!("Missing required _meta key {key}")));
    let meta = match params.get("_meta") {
        Some(Value::Object(m)) => m,
        Some(_) => return Some(RpcError::invalid_params("_meta must be an object")),
        None => return missing(META_PROTOCOL_VERSION),
    };
    let version = match meta.get(META_PROTOCOL_VERSION) {
        Some(Value::String(v)) => v,
        Some(_) => {
            return Some(RpcError::invalid_params(format!(
                "_meta {META_PROTOCOL_VERSION} must be a string"
            )))
        }
        None => return missing(META_PROTOCOL_VERSION),
    };
    match meta.get(META_CLIENT_CAPABILITIES) {
        Some(Value::Object(_)) => {}
        Some(_) => {
            return Some(RpcError::invalid_params(format!(
                "_meta {META_CLIENT_CAPABILITIES} must be an object"
            )))
        }
        None => return missing(META_CLIENT_CAPABILITIES),
    }
    if !cfg.supported_versions.iter().any(|v| v == version) {
        return Some(unsupported_version(cfg, meta.get(META_PROTOCOL_VERSION)));
    }
    if let Some(level) = meta.get(META_LOG_LEVEL) {
        if level.as_str().and_then(crate::server::level_rank).is_none() {
            return Some(RpcError::invalid_params(format!("Invalid log level: {level}")));
        }
    }
    None
}

pub fn handle(ctx: &Ctx, method: &str, params: &Map<String, Value>) -> Reply {
    let cfg = &ctx.srv.cfg;
    if method == "initialize" {
        // Legacy is not (or no longer) available here: list modern versions only.
        let supported = cfg.supported_versions.clone();
        return version_error(supported, params.get("protocolVersion")).into();
    }
    if tasks::handles(method) {
        return match meta_error(cfg, params) {
            Some(err) => err.into(),
            None => tasks::handle(ctx, method, params),
        };
    }
    if !METHODS.contains(&method) && !skills::handles(cfg.skills, method) {
        return RpcError::method_not_found().into();
    }
    if let Some(err) = meta_error(cfg, params) {
        return err.into();
    }
    match method {
        "server/discover" => discover(cfg),
        "tools/list" => catalog::list_reply(ctx, params, "tools", crate::redefine::listed(ctx)),
        "tools/call" => tools::call(ctx, params),
        "prompts/list" => catalog::list_reply(ctx, params, "prompts", catalog::prompts()),
        "prompts/get" => catalog::get_prompt(ctx, params),
        "resources/list" => catalog::list_reply(ctx, params, "resources", catalog::resources()),
        "resources/templates/list" => catalog::list_reply(ctx, params, "resourceTemplates", catalog::templates()),
        "resources/read" => catalog::read_resource(ctx, params),
        "completion/complete" => catalog::complete(params),
        "subscriptions/listen" => match listen::parse_filter(params.get("notifications")) {
            // Following tasks needs the tasks extension, as its `tasks/*` requests do.
            Ok(filter) if filter.contains_key(listen::TASK_IDS) && !tasks::declared(ctx) => {
                tasks::missing_extension().into()
            }
            Ok(filter) => {
                ctx.srv.listens.open(&ctx.out, ctx.id.clone(), filter);
                Reply::Nothing
            }
            Err(e) => e.into(),
        },
        _ => match cfg.skills {
            Some(mode) if skills::handles(cfg.skills, method) => skills::handle(ctx, mode, method, params),
            _ => RpcError::method_not_found().into(),
        },
    }
}

fn discover(cfg: &Config) -> Reply {
    let mut body = json!({
        "supportedVersions": cfg.supported_versions,
        "capabilities": {
            "tools": {"listChanged": true},
            "prompts": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": true},
            "completions": {},
            "logging": {},
        },
        "instructions": INSTRUCTIONS,
        "ttlMs": cfg.cache_ttl_ms,
        "cacheScope": cfg.cache_scope,
    });
    skills::declare(cfg.skills, &mut body["capabilities"]);
    Reply::Result(body.as_object().cloned().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn meta_validation() {
        let cfg = Config::default();
        let ok = params(json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}));
        assert_eq!(meta_error(&cfg, &ok), None);

        let none = meta_error(&cfg, &Map::new()).unwrap();
        assert_eq!(none.code, -32602);
        assert!(none.message.contains("protocolVersion"));

        let no_caps = params(json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}));
        assert!(meta_error(&cfg, &no_caps)
            .unwrap()
            .message
            .contains("clientCapabilities"));

        let old = params(json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "1900-01-01",
            "io.modelcontextprotocol/clientCapabilities": {}}}));
        let err = meta_error(&cfg, &old).unwrap();
        assert_eq!(err.code, -32022);
        assert_eq!(
            err.data,
            Some(json!({"supported": ["2026-07-28", "2025-11-25"], "requested": "1900-01-01"}))
        );

        let bad_level = params(json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/logLevel": "loud"}}));
        assert_eq!(meta_error(&cfg, &bad_level).unwrap().code, -32602);
    }
}
