//! The tasks extension (SEP-2663), server side, for the client's tests. When a `tools/call`
//! declares `io.modelcontextprotocol/tasks`, the unlisted tools `task_echo`, `task_fail`,
//! `task_input`, `task_slow` and `task_stuck` answer with a task (`pollIntervalMs` 50) that
//! `tasks/get` advances one step per poll:
//! - `task_echo {text}`: working, then completed with the text;
//! - `task_fail`: failed with JSON-RPC error -32603;
//! - `task_input`: input_required (key `confirm`, a form elicitation) until `tasks/update`
//!   answers it, once more after that (the ack is eventually consistent), then completed;
//!   a key answered twice makes the result an error;
//! - `task_slow`: working until `tasks/cancel`, its status message changing on every poll;
//! - `task_stuck`: working until `tasks/cancel`, its status message never changing.
//!
//! Each status change is pushed as `notifications/tasks` to the listens whose `taskIds` name
//! the task. A poll sooner than 40 ms after the previous poll is noted and reported in
//! the final result. Without the declaration the tools answer synchronously and `tasks/*`
//! answers -32021. Unknown task ids get -32602.

use crate::listen::Event;
use crate::server::{Ctx, Era};
use crate::tools::{error_result, text_result};
use crate::wire::{Reply, RpcError, MISSING_CAPABILITY};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

pub const EXTENSION: &str = "io.modelcontextprotocol/tasks";
const POLL_INTERVAL_MS: u64 = 50;
const TOO_FAST: Duration = Duration::from_millis(40);
const CREATED_AT: &str = "2026-07-28T00:00:00Z";

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Echo,
    Fail,
    Input,
    Slow,
    Stuck,
}

struct Task {
    kind: Kind,
    text: String,
    status: &'static str,
    polls: u32,
    last_touch: Instant,
    too_fast: bool,
    confirmed: Option<Value>,
    polls_since_answer: u32,
    duplicate_key: bool,
}

fn tasks() -> &'static Mutex<HashMap<String, Task>> {
    static TASKS: OnceLock<Mutex<HashMap<String, Task>>> = OnceLock::new();
    TASKS.get_or_init(Default::default)
}

pub fn handles(method: &str) -> bool {
    matches!(method, "tasks/get" | "tasks/update" | "tasks/cancel")
}

pub fn declared(ctx: &Ctx) -> bool {
    ctx.era == Era::Modern
        && ctx
            .client_capabilities()
            .get("extensions")
            .and_then(|e| e.get(EXTENSION))
            .is_some()
}

pub fn missing_extension() -> RpcError {
    RpcError::new(
        MISSING_CAPABILITY,
        "Server requires the tasks extension for this request",
    )
    .with_data(json!({"requiredCapabilities": {"extensions": {EXTENSION: {}}}}))
}

/// The task tools; `None` for any other name.
pub fn call(ctx: &Ctx, name: &str, args: &Map<String, Value>) -> Option<Reply> {
    let kind = match name {
        "task_echo" => Kind::Echo,
        "task_fail" => Kind::Fail,
        "task_input" => Kind::Input,
        "task_slow" => Kind::Slow,
        "task_stuck" => Kind::Stuck,
        _ => return None,
    };
    let text = args.get("text").and_then(Value::as_str).unwrap_or("").to_string();
    if !declared(ctx) {
        return Some(Reply::Result(text_result(&format!("sync: {name} {text}"))));
    }
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let id = format!("task-{}", NEXT.fetch_add(1, Ordering::SeqCst));
    let task = Task {
        kind,
        text,
        status: "working",
        polls: 0,
        last_touch: Instant::now(),
        too_fast: false,
        confirmed: None,
        polls_since_answer: 0,
        duplicate_key: false,
    };
    let mut body = view(&id, &task);
    body.insert("resultType".into(), json!("task"));
    tasks().lock().unwrap().insert(id, task);
    Some(Reply::Result(body))
}

fn view(id: &str, task: &Task) -> Map<String, Value> {
    let mut body = json!({
        "taskId": id,
        "status": task.status,
        "createdAt": CREATED_AT,
        "lastUpdatedAt": CREATED_AT,
        "ttlMs": 60000,
        "pollIntervalMs": POLL_INTERVAL_MS,
    });
    if task.status == "working" {
        body["statusMessage"] = match task.kind {
            Kind::Stuck => json!("waiting"),
            _ => json!(format!("step {}", task.polls)),
        };
    }
    body.as_object().cloned().unwrap_or_default()
}

pub fn handle(ctx: &Ctx, method: &str, params: &Map<String, Value>) -> Reply {
    if !declared(ctx) {
        return missing_extension().into();
    }
    let Some(id) = params.get("taskId").and_then(Value::as_str) else {
        return RpcError::invalid_params("Missing required parameter: taskId").into();
    };
    let mut all = tasks().lock().unwrap();
    let Some(task) = all.get_mut(id) else {
        return RpcError::invalid_params(format!("Unknown task: {id}")).into();
    };
    let before = task.status;
    let reply = match method {
        "tasks/get" => Reply::Result(poll(id, task)),
        "tasks/update" => {
            let Some(Value::Object(responses)) = params.get("inputResponses") else {
                return RpcError::invalid_params("inputResponses must be an object").into();
            };
            if let Some(answer) = responses.get("confirm") {
                if task.confirmed.is_some() {
                    task.duplicate_key = true;
                } else {
                    task.confirmed = Some(answer.clone());
                }
            }
            Reply::Result(Map::new())
        }
        _ => {
            if matches!(task.status, "working" | "input_required") {
                task.status = "cancelled";
            }
            Reply::Result(Map::new())
        }
    };
    if task.status != before {
        // Listens following this task hear of each change (the whole task, as tasks/get shows it).
        let shown = match &reply {
            Reply::Result(body) if method == "tasks/get" => body.clone(),
            _ => view(id, task),
        };
        ctx.srv.listens.broadcast(&Event::Task(id, &shown));
    }
    reply
}

/// One `tasks/get`: advances the task by one step and shows it.
fn poll(id: &str, task: &mut Task) -> Map<String, Value> {
    let now = Instant::now();
    // The first poll may come at once (creation is durable; a resumed task is polled at once).
    if task.polls > 0 && now.duration_since(task.last_touch) < TOO_FAST {
        task.too_fast = true;
    }
    task.last_touch = now;
    task.polls += 1;
    let mut extra = Map::new();
    match (task.kind, task.status) {
        (_, "completed" | "failed" | "cancelled") => {}
        (Kind::Echo, _) if task.polls >= 2 => task.status = "completed",
        (Kind::Fail, _) => task.status = "failed",
        (Kind::Input, _) => {
            if task.confirmed.is_some() {
                task.polls_since_answer += 1;
            }
            task.status = if task.polls_since_answer >= 2 {
                "completed"
            } else {
                "input_required"
            };
        }
        _ => {}
    }
    match task.status {
        "completed" => {
            let text = match task.kind {
                Kind::Input => format!("confirmed: {}", task.confirmed.clone().unwrap_or(Value::Null)),
                _ => format!("task: {}", task.text),
            };
            let result = if task.too_fast {
                error_result("the client polled faster than pollIntervalMs")
            } else if task.duplicate_key {
                error_result("input key confirm was answered twice")
            } else {
                text_result(&text)
            };
            extra.insert("result".into(), Value::Object(result));
        }
        "failed" => {
            extra.insert(
                "error".into(),
                json!({"code": -32603, "message": "task failed on purpose"}),
            );
        }
        "input_required" => {
            extra.insert(
                "inputRequests".into(),
                json!({"confirm": {"method": "elicitation/create", "params": {
                    "mode": "form",
                    "message": "Go ahead?",
                    "requestedSchema": {"type": "object", "properties": {"confirmed": {"type": "boolean"}}, "required": ["confirmed"]},
                }}}),
            );
        }
        _ => {}
    }
    let mut body = view(id, task);
    body.extend(extra);
    body
}
