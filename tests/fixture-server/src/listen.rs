//! Modern `subscriptions/listen` bookkeeping.

use crate::sink::{self, SinkRef};
use crate::wire::RpcError;
use serde_json::{json, Map, Value};
use std::sync::Mutex;

pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

const FLAGS: [&str; 3] = ["toolsListChanged", "promptsListChanged", "resourcesListChanged"];
/// The tasks extension's filter key: status changes of these tasks (`notifications/tasks`).
pub const TASK_IDS: &str = "taskIds";

/// Validates a listen filter and returns the honoured subset: every known
/// key, as asked, in the order asked; unknown keys are dropped.
pub fn parse_filter(notifications: Option<&Value>) -> Result<Map<String, Value>, RpcError> {
    let asked = match notifications {
        Some(Value::Object(m)) => m,
        Some(_) => return Err(RpcError::invalid_params("notifications must be an object")),
        None => return Err(RpcError::invalid_params("Missing required parameter: notifications")),
    };
    let mut honoured = Map::new();
    for (key, value) in asked {
        if FLAGS.contains(&key.as_str()) {
            if !value.is_boolean() {
                return Err(RpcError::invalid_params(format!(
                    "notifications.{key} must be a boolean"
                )));
            }
            honoured.insert(key.clone(), value.clone());
        } else if key == "resourceSubscriptions" || key == TASK_IDS {
            let ok = value.as_array().is_some_and(|items| items.iter().all(Value::is_string));
            if !ok {
                return Err(RpcError::invalid_params(format!(
                    "notifications.{key} must be an array of strings"
                )));
            }
            honoured.insert(key.clone(), value.clone());
        }
    }
    Ok(honoured)
}

/// What a listen may be told about.
pub enum Event<'a> {
    ToolsListChanged,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated(&'a str),
    /// A task's new status: its id and the whole task, as `tasks/get` shows it.
    Task(&'a str, &'a Map<String, Value>),
}

impl Event<'_> {
    fn method(&self) -> &'static str {
        match self {
            Event::ToolsListChanged => "notifications/tools/list_changed",
            Event::PromptsListChanged => "notifications/prompts/list_changed",
            Event::ResourcesListChanged => "notifications/resources/list_changed",
            Event::ResourceUpdated(_) => "notifications/resources/updated",
            Event::Task(..) => "notifications/tasks",
        }
    }

    fn wanted_by(&self, filter: &Map<String, Value>) -> bool {
        let flag = |name: &str| filter.get(name) == Some(&Value::Bool(true));
        let listed = |name: &str, item: &str| {
            filter
                .get(name)
                .and_then(Value::as_array)
                .is_some_and(|items| items.iter().any(|i| i.as_str() == Some(item)))
        };
        match self {
            Event::ToolsListChanged => flag("toolsListChanged"),
            Event::PromptsListChanged => flag("promptsListChanged"),
            Event::ResourcesListChanged => flag("resourcesListChanged"),
            Event::ResourceUpdated(uri) => listed("resourceSubscriptions", uri),
            Event::Task(id, _) => listed(TASK_IDS, id),
        }
    }
}

struct Listen {
    id: Value,
    filter: Map<String, Value>,
    /// Where its notifications and result go: stdout, or the listen POST's
    /// SSE stream.
    out: SinkRef,
}

/// The open listens. The lock is held while writing, so an acknowledgement
/// always precedes any notification of its subscription. A listen whose
/// sink died (its HTTP stream closed) is dropped at the next look.
#[derive(Default)]
pub struct Listens {
    open: Mutex<Vec<Listen>>,
}

fn tag(id: &Value) -> Value {
    json!({ SUBSCRIPTION_ID: id })
}

impl Listens {
    fn live(&self) -> std::sync::MutexGuard<'_, Vec<Listen>> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        open.retain(|l| l.out.alive());
        open
    }

    /// Registers a listen and sends its acknowledgement on `out`.
    pub fn open(&self, out: &SinkRef, id: Value, filter: Map<String, Value>) {
        let mut open = self.live();
        out.notify(
            "notifications/subscriptions/acknowledged",
            Some(json!({"_meta": tag(&id), "notifications": filter})),
        );
        open.push(Listen {
            id,
            filter,
            out: out.clone(),
        });
    }

    /// Ends the listen with this id (same JSON value and type) opened on the
    /// channel whose sink key is `owner`, silently.
    pub fn cancel(&self, id: &Value, owner: usize) -> bool {
        let mut open = self.live();
        let before = open.len();
        open.retain(|l| &l.id != id || sink::key(&l.out) != owner);
        open.len() != before
    }

    /// Sends `event` to every listen that asked for it; returns how many.
    pub fn broadcast(&self, event: &Event) -> usize {
        let open = self.live();
        let mut sent = 0;
        for listen in open.iter().filter(|l| event.wanted_by(&l.filter)) {
            let mut params = Map::new();
            match event {
                Event::ResourceUpdated(uri) => drop(params.insert("uri".into(), json!(uri))),
                Event::Task(_, task) => params.extend(task.iter().map(|(k, v)| (k.clone(), v.clone()))),
                _ => {}
            }
            params.insert("_meta".into(), tag(&listen.id));
            listen.out.notify(event.method(), Some(Value::Object(params)));
            sent += 1;
        }
        sent
    }

    /// Ends every open listen by sending its result; returns how many.
    pub fn end_all(&self, server_info: &Value) -> usize {
        let mut open = self.live();
        for listen in open.iter() {
            let result = json!({
                "resultType": "complete",
                "_meta": {
                    SUBSCRIPTION_ID: listen.id,
                    "io.modelcontextprotocol/serverInfo": server_info,
                }
            });
            listen.out.send_result(&listen.id, result);
        }
        let n = open.len();
        open.clear();
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_echoes_known_keys_in_order() {
        let asked = json!({
            "resourceSubscriptions": ["fixture://static"],
            "bogus": 1,
            "toolsListChanged": true,
            "promptsListChanged": false
        });
        let honoured = parse_filter(Some(&asked)).unwrap();
        assert_eq!(
            serde_json::to_string(&honoured).unwrap(),
            r#"{"resourceSubscriptions":["fixture://static"],"toolsListChanged":true,"promptsListChanged":false}"#
        );
    }

    #[test]
    fn filter_rejects_bad_shapes() {
        assert!(parse_filter(None).is_err());
        assert!(parse_filter(Some(&json!([]))).is_err());
        assert!(parse_filter(Some(&json!({"toolsListChanged": "yes"}))).is_err());
        assert!(parse_filter(Some(&json!({"resourceSubscriptions": [1]}))).is_err());
        assert!(parse_filter(Some(&json!({}))).unwrap().is_empty());
    }

    #[test]
    fn listens_use_their_own_sink_and_die_with_it() {
        use crate::sink::testing::VecSink;
        use crate::sink::NullSink;
        use crate::streams::ChannelSink;
        use std::sync::Arc;

        let listens = Listens::default();
        let stdio = Arc::new(VecSink::default());
        let stdio_ref: SinkRef = stdio.clone();
        let (http, _rx) = ChannelSink::new();
        let http_ref: SinkRef = http.clone();
        let filter = parse_filter(Some(&json!({"toolsListChanged": true}))).unwrap();
        listens.open(&stdio_ref, json!(1), filter.clone());
        listens.open(&http_ref, json!(1), filter);
        assert_eq!(listens.broadcast(&Event::ToolsListChanged), 2);
        // notifications/cancelled only ends listens of the same channel.
        let other: SinkRef = Arc::new(NullSink);
        assert!(!listens.cancel(&json!(1), sink::key(&other)));
        // A closed HTTP stream drops its listen.
        http.close();
        assert_eq!(listens.broadcast(&Event::ToolsListChanged), 1);
        assert!(listens.cancel(&json!(1), sink::key(&stdio_ref)));
        assert_eq!(listens.end_all(&json!({})), 0);
        let got = stdio.0.lock().unwrap();
        let methods: Vec<&str> = got.iter().filter_map(|m| m["method"].as_str()).collect();
        assert_eq!(
            methods,
            [
                "notifications/subscriptions/acknowledged",
                "notifications/tools/list_changed",
                "notifications/tools/list_changed"
            ]
        );
    }

    #[test]
    fn events_match_filters() {
        let filter = parse_filter(Some(&json!({
            "toolsListChanged": true,
            "promptsListChanged": false,
            "resourceSubscriptions": ["fixture://a"]
        })))
        .unwrap();
        assert!(Event::ToolsListChanged.wanted_by(&filter));
        assert!(!Event::PromptsListChanged.wanted_by(&filter));
        assert!(!Event::ResourcesListChanged.wanted_by(&filter));
        assert!(Event::ResourceUpdated("fixture://a").wanted_by(&filter));
        assert!(!Event::ResourceUpdated("fixture://b").wanted_by(&filter));
        let task = Map::new();
        assert!(!Event::Task("task-1", &task).wanted_by(&filter));
        let filter = parse_filter(Some(&json!({"taskIds": ["task-1"]}))).unwrap();
        assert!(Event::Task("task-1", &task).wanted_by(&filter));
        assert!(!Event::Task("task-2", &task).wanted_by(&filter));
        assert!(parse_filter(Some(&json!({"taskIds": "task-1"}))).is_err());
    }
}
