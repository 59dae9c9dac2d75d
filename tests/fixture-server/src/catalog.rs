//! Prompts, resources, resource templates, completion and pagination.

use crate::flows;
use crate::mrtr::{self, Target};
use crate::server::{Ctx, Era};
use crate::wire::{Reply, RpcError};
use serde_json::{json, Map, Value};

const COMPLETION_NAMES: [&str; 4] = ["alice", "albert", "bob", "carol"];
const COMPLETION_ITEM_IDS: [&str; 3] = ["1", "2", "42"];
const ITEM_PREFIX: &str = "fixture://items/";
const ITEM_TEMPLATE: &str = "fixture://items/{id}";

/// Splits `items` into pages of `page_size` (None = one page). The first
/// page has no cursor; page N (N >= 2) has cursor `page-N`; the last page
/// has no `nextCursor`. Any cursor not issued is invalid (-32602).
pub fn paginate(
    items: Vec<Value>,
    page_size: Option<usize>,
    cursor: Option<&Value>,
) -> Result<(Vec<Value>, Option<String>), RpcError> {
    let size = page_size.unwrap_or(usize::MAX).max(1);
    let pages = items.len().div_ceil(size).max(1);
    let page = match cursor {
        None => 1,
        Some(Value::String(c)) => c
            .strip_prefix("page-")
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|n| (2..=pages).contains(n) && format!("page-{n}") == *c)
            .ok_or_else(|| RpcError::invalid_params(format!("Invalid cursor: {c:?}")))?,
        Some(other) => return Err(RpcError::invalid_params(format!("Invalid cursor: {other}"))),
    };
    let start = (page - 1) * size;
    let slice = items.into_iter().skip(start).take(size).collect();
    let next = (page < pages).then(|| format!("page-{}", page + 1));
    Ok((slice, next))
}

/// A (possibly paginated) list result under `key`; modern adds ttlMs and
/// cacheScope.
pub fn list_reply(ctx: &Ctx, params: &Map<String, Value>, key: &str, items: Vec<Value>) -> Reply {
    if let (Some(n), "tools") = (ctx.srv.cfg.exit_after_lists, key) {
        static LISTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        if LISTS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1 >= n {
            eprintln!("fixture: exiting at tools/list number {n} (--exit-after-lists)");
            std::process::exit(0);
        }
    }
    let (page, next) = match paginate(items, ctx.srv.cfg.page_size, params.get("cursor")) {
        Ok(p) => p,
        Err(e) => return e.into(),
    };
    let mut body = Map::new();
    body.insert(key.into(), Value::Array(page));
    if let Some(next) = next {
        body.insert("nextCursor".into(), json!(next));
    }
    add_cache_fields(ctx, &mut body);
    Reply::Result(body)
}

/// Legacy results get them only with `--cache-ttl-ms` (a legacy server that sends the hints
/// anyway), so the client's handling of legacy notifications can be observed.
fn add_cache_fields(ctx: &Ctx, body: &mut Map<String, Value>) {
    if ctx.era == Era::Modern || ctx.srv.cfg.cache_ttl_ms > 0 {
        body.insert("ttlMs".into(), json!(ctx.srv.cfg.cache_ttl_ms));
        body.insert("cacheScope".into(), json!(ctx.srv.cfg.cache_scope));
    }
}

pub fn prompts() -> Vec<Value> {
    vec![
        json!({"name": "greeting", "description": "Greets someone by name",
               "arguments": [{"name": "name", "description": "Who to greet", "required": true}]}),
        json!({"name": "needs_input",
               "description": "Asks the client for a topic first (MRTR / elicitation)"}),
        json!({"name": "plain", "description": "A prompt without arguments"}),
    ]
}

pub fn resources() -> Vec<Value> {
    vec![
        json!({"uri": "fixture://static", "name": "static", "description": "Static text",
               "mimeType": "text/plain"}),
        json!({"uri": "fixture://needs-input", "name": "needs-input",
               "description": "Asks the client for a password first (MRTR / elicitation)",
               "mimeType": "text/plain"}),
        json!({"uri": "fixture://binary", "name": "binary", "description": "Four bytes 00 01 02 03",
               "mimeType": "application/octet-stream"}),
    ]
}

pub fn templates() -> Vec<Value> {
    vec![json!({"uriTemplate": ITEM_TEMPLATE, "name": "item",
                "description": "Item by id", "mimeType": "text/plain"})]
}

fn user_message(text: &str) -> Value {
    json!({"role": "user", "content": {"type": "text", "text": text}})
}

/// A GetPromptResult body.
pub fn prompt_body(description: &str, text: &str) -> Map<String, Value> {
    let body = json!({"description": description, "messages": [user_message(text)]});
    body.as_object().cloned().unwrap_or_default()
}

/// A ReadResourceResult body (modern adds ttlMs/cacheScope).
pub fn resource_body(ctx: &Ctx, contents: Vec<Value>) -> Map<String, Value> {
    let mut body = Map::new();
    body.insert("contents".into(), Value::Array(contents));
    add_cache_fields(ctx, &mut body);
    body
}

pub fn text_contents(uri: &str, text: &str) -> Value {
    json!({"uri": uri, "mimeType": "text/plain", "text": text})
}

pub fn get_prompt(ctx: &Ctx, params: &Map<String, Value>) -> Reply {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return RpcError::invalid_params("Missing required parameter: name").into();
    };
    let args = match params.get("arguments") {
        None => Map::new(),
        Some(Value::Object(a)) if a.values().all(Value::is_string) => a.clone(),
        Some(_) => return RpcError::invalid_params("arguments must be an object of strings").into(),
    };
    if name == "needs_input" {
        return mrtr::run(ctx, &flows::PROMPT_NEEDS_INPUT, params, Target::Prompt);
    }
    if let Some(err) = mrtr::unexpected_state(ctx, params) {
        return err.into();
    }
    match name {
        "greeting" => match args.get("name").and_then(Value::as_str) {
            Some(who) => Reply::Result(prompt_body("A greeting", &format!("Hello, {who}!"))),
            None => RpcError::invalid_params("Missing required argument: name").into(),
        },
        "plain" => Reply::Result(prompt_body("A plain prompt", "A plain prompt with no arguments.")),
        other => RpcError::invalid_params(format!("Unknown prompt: {other}")).into(),
    }
}

pub fn read_resource(ctx: &Ctx, params: &Map<String, Value>) -> Reply {
    let Some(uri) = params.get("uri").and_then(Value::as_str) else {
        return RpcError::invalid_params("Missing required parameter: uri").into();
    };
    if uri == "fixture://needs-input" {
        return mrtr::run(ctx, &flows::RESOURCE_NEEDS_INPUT, params, Target::Resource);
    }
    if let Some(err) = mrtr::unexpected_state(ctx, params) {
        return err.into();
    }
    let contents = match uri {
        "fixture://static" => text_contents(uri, "static content"),
        "fixture://binary" => {
            json!({"uri": uri, "mimeType": "application/octet-stream", "blob": "AAECAw=="})
        }
        _ => match uri.strip_prefix(ITEM_PREFIX).filter(|id| !id.is_empty()) {
            Some(id) => text_contents(uri, &format!("item {id}")),
            None => match crate::skills::read(ctx.srv.cfg.skills, uri)
                .or_else(|| ctx.srv.cfg.apps.then(|| crate::apps::read(uri)).flatten())
            {
                Some(item) => item,
                None => {
                    return RpcError::invalid_params("Resource not found")
                        .with_data(json!({"uri": uri}))
                        .into()
                }
            },
        },
    };
    Reply::Result(resource_body(ctx, vec![contents]))
}

/// completion/complete: `greeting`'s `name` argument completes from a fixed
/// list; the item template's `id` completes from a few ids.
pub fn complete(params: &Map<String, Value>) -> Reply {
    let Some(reference) = params.get("ref").and_then(Value::as_object) else {
        return RpcError::invalid_params("Missing required parameter: ref").into();
    };
    let argument = params.get("argument").and_then(Value::as_object);
    let (Some(arg_name), Some(prefix)) = (
        argument.and_then(|a| a.get("name")).and_then(Value::as_str),
        argument.and_then(|a| a.get("value")).and_then(Value::as_str),
    ) else {
        return RpcError::invalid_params("argument must be {name, value}").into();
    };
    let candidates: &[&str] = match reference.get("type").and_then(Value::as_str) {
        Some("ref/prompt") => {
            let name = reference.get("name").and_then(Value::as_str).unwrap_or_default();
            if !prompts().iter().any(|p| p["name"] == name) {
                return RpcError::invalid_params(format!("Unknown prompt: {name}")).into();
            }
            if name == "greeting" && arg_name == "name" {
                &COMPLETION_NAMES
            } else {
                &[]
            }
        }
        Some("ref/resource") => {
            let uri = reference.get("uri").and_then(Value::as_str).unwrap_or_default();
            if uri == ITEM_TEMPLATE && arg_name == "id" {
                &COMPLETION_ITEM_IDS
            } else if resources().iter().any(|r| r["uri"] == uri) {
                &[]
            } else {
                return RpcError::invalid_params("Resource not found")
                    .with_data(json!({"uri": uri}))
                    .into();
            }
        }
        _ => return RpcError::invalid_params("ref.type must be ref/prompt or ref/resource").into(),
    };
    let values: Vec<&str> = candidates.iter().copied().filter(|c| c.starts_with(prefix)).collect();
    let body = json!({"completion": {"values": values, "total": values.len(), "hasMore": false}});
    Reply::Result(body.as_object().cloned().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(n: usize) -> Vec<Value> {
        (0..n).map(|i| json!(i)).collect()
    }

    #[test]
    fn single_page_by_default() {
        let (page, next) = paginate(items(5), None, None).unwrap();
        assert_eq!(page.len(), 5);
        assert_eq!(next, None);
        assert!(paginate(items(5), None, Some(&json!("page-2"))).is_err());
        assert!(paginate(items(0), Some(2), None).unwrap().0.is_empty());
    }

    #[test]
    fn pages_and_cursors() {
        let (p1, n1) = paginate(items(5), Some(2), None).unwrap();
        assert_eq!((p1, n1.as_deref()), (vec![json!(0), json!(1)], Some("page-2")));
        let (p2, n2) = paginate(items(5), Some(2), Some(&json!("page-2"))).unwrap();
        assert_eq!((p2, n2.as_deref()), (vec![json!(2), json!(3)], Some("page-3")));
        let (p3, n3) = paginate(items(5), Some(2), Some(&json!("page-3"))).unwrap();
        assert_eq!((p3, n3), (vec![json!(4)], None));
    }

    #[test]
    fn invalid_cursors() {
        for bad in [
            json!("page-1"),
            json!("page-4"),
            json!("page-02"),
            json!(""),
            json!(2),
            json!(null),
        ] {
            let err = paginate(items(5), Some(2), Some(&bad)).unwrap_err();
            assert_eq!(err.code, -32602, "{bad}");
        }
    }

    #[test]
    fn completion_filters_by_prefix() {
        let params = json!({"ref": {"type": "ref/prompt", "name": "greeting"},
                            "argument": {"name": "name", "value": "al"}});
        let Reply::Result(body) = complete(params.as_object().unwrap()) else {
            panic!()
        };
        assert_eq!(
            Value::Object(body),
            json!({"completion": {"values": ["alice", "albert"], "total": 2, "hasMore": false}})
        );
        let unknown = json!({"ref": {"type": "ref/prompt", "name": "nope"},
                             "argument": {"name": "name", "value": ""}});
        assert!(matches!(complete(unknown.as_object().unwrap()), Reply::Error(_)));
    }
}
