//! Input handlers (elicitation, sampling, roots) and listeners. One registration serves both
//! routes: MRTR `inputRequests` (modern) and real server→client requests (legacy).

use super::cancel::CancelToken;
use super::input_modes::ElicitationModes;
use crate::base::BoxFuture;
use crate::protocol::methods;
use serde_json::Value;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// One request for input, from an MRTR round or a legacy server→client request.
#[derive(Debug, Clone)]
pub struct InputRequest {
    /// `elicitation/create`, `sampling/createMessage` or `roots/list`.
    pub method: String,
    /// The request's params, `None` when the server sent none (`roots/list`).
    pub params: Option<Value>,
    /// Cancelled when the answer is no longer wanted (call cancelled, timed out, sibling failed).
    pub cancel: CancelToken,
}

pub use crate::base::HandlerError;

/// Answers a server's request for input (elicitation, sampling, roots), from an MRTR round or
/// a legacy server→client request. Closures `Fn(InputRequest) -> impl Future` implement it.
pub trait InputHandler: Send + Sync + 'static {
    /// Answers with the bare result object (`ElicitResult`, `CreateMessageResult`, `ListRootsResult`).
    fn handle(&self, request: InputRequest) -> BoxFuture<'static, Result<Value, HandlerError>>;
}

impl<F, Fut> InputHandler for F
where
    F: Fn(InputRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, HandlerError>> + Send + 'static,
{
    fn handle(&self, request: InputRequest) -> BoxFuture<'static, Result<Value, HandlerError>> {
        Box::pin(self(request))
    }
}

/// The kinds of input a server may ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// `elicitation/create`: ask the user.
    Elicitation,
    /// `sampling/createMessage`: ask the host's model.
    Sampling,
    /// `roots/list`: the host's roots.
    Roots,
}

impl InputKind {
    /// The kind a request method asks for; `None` for other methods.
    pub fn of_method(method: &str) -> Option<InputKind> {
        match method {
            methods::ELICITATION_CREATE => Some(InputKind::Elicitation),
            methods::SAMPLING_CREATE_MESSAGE => Some(InputKind::Sampling),
            methods::ROOTS_LIST => Some(InputKind::Roots),
            _ => None,
        }
    }
}

/// A diagnostic line: the server's stderr, or the library's own warnings.
#[derive(Debug, Clone, PartialEq)]
pub struct LogLine {
    /// `stderr` (server output), `transport` or `client` (library diagnostics).
    pub source: String,
    /// `info` for stderr lines, `warning` for library warnings.
    pub level: &'static str,
    /// The line, with the server's text made safe to show.
    pub message: String,
}

/// A listener for server notifications: the method and its params.
pub type NotificationFn = Arc<dyn Fn(&str, &Value) + Send + Sync>;
/// A listener for log lines (server stderr, library diagnostics).
pub type LogFn = Arc<dyn Fn(&LogLine) + Send + Sync>;

/// Handlers and listeners, shared by the client and its live session. Callbacks are cloned out
/// before they run, so no lock is held while host code executes.
#[derive(Default)]
pub(crate) struct Hooks {
    elicitation: RwLock<Option<Arc<dyn InputHandler>>>,
    /// The modes the elicitation handler answers (form only unless registered with URL).
    elicitation_modes: RwLock<ElicitationModes>,
    sampling: RwLock<Option<Arc<dyn InputHandler>>>,
    roots: RwLock<Option<Arc<dyn InputHandler>>>,
    notification: RwLock<Option<NotificationFn>>,
    log: RwLock<Option<LogFn>>,
    /// Bumped by every change of the input handlers or elicitation modes, which is all the
    /// declared capabilities can change by (the rest is configuration): `request::MetaHead`
    /// reuses its text while this stays the same.
    inputs_changed: AtomicU64,
    /// Told of every notification first: list_changed and updated invalidate its entries.
    cache: Option<Arc<super::cache::ResponseCache>>,
    /// The client declares `sampling.tools` (SEP-1577): requests may offer tools.
    sampling_tools: bool,
}

impl Hooks {
    /// Hooks that keep `cache` in step with the server's notifications; `sampling_tools`: the
    /// client declares `sampling.tools`.
    pub fn new(cache: Arc<super::cache::ResponseCache>, sampling_tools: bool) -> Hooks {
        Hooks {
            cache: Some(cache),
            sampling_tools,
            ..Hooks::default()
        }
    }

    fn slot(&self, kind: InputKind) -> &RwLock<Option<Arc<dyn InputHandler>>> {
        match kind {
            InputKind::Elicitation => &self.elicitation,
            InputKind::Sampling => &self.sampling,
            InputKind::Roots => &self.roots,
        }
    }

    pub fn set_handler(&self, kind: InputKind, handler: Option<Arc<dyn InputHandler>>) {
        match kind {
            InputKind::Elicitation => self.set_elicitation(handler, ElicitationModes::FORM),
            _ => self.replace(kind, handler, None),
        }
    }

    /// Puts `handler` in `kind`'s slot, with `modes` for an elicitation handler: the modes are
    /// written under the slot's lock, so a request never meets a handler with another's modes.
    fn replace(&self, kind: InputKind, handler: Option<Arc<dyn InputHandler>>, modes: Option<ElicitationModes>) {
        let mut slot = self.slot(kind).write().unwrap();
        if let Some(modes) = modes {
            *self.elicitation_modes.write().unwrap() = modes;
        }
        let old = std::mem::replace(&mut *slot, handler);
        drop(slot);
        self.inputs_changed.fetch_add(1, Ordering::SeqCst);
        drop(old); // outside the lock: dropping may run host code (userdata_free)
    }

    /// Changes of the input handlers so far (see `inputs_changed`).
    pub fn inputs_generation(&self) -> u64 {
        self.inputs_changed.load(Ordering::SeqCst)
    }

    pub fn handler(&self, kind: InputKind) -> Option<Arc<dyn InputHandler>> {
        self.slot(kind).read().unwrap().clone()
    }

    /// Registers the elicitation handler with the modes it answers.
    pub fn set_elicitation(&self, handler: Option<Arc<dyn InputHandler>>, modes: ElicitationModes) {
        self.replace(InputKind::Elicitation, handler, Some(modes));
    }

    /// The modes of the registered elicitation handler, `None` without one.
    pub fn elicitation_modes(&self) -> Option<ElicitationModes> {
        self.handler(InputKind::Elicitation)
            .map(|_| *self.elicitation_modes.read().unwrap())
    }

    /// The handler for one request: as [`Hooks::handler_for`], and `None` for an elicitation
    /// in a mode the handler was not registered for (so it is left to the host, never
    /// answered by a form handler that cannot open a URL).
    pub fn handler_for_request(&self, method: &str, params: Option<&Value>) -> Option<Arc<dyn InputHandler>> {
        if InputKind::of_method(method) == Some(InputKind::Elicitation) {
            // The handler and its modes read under the slot's lock, as `replace` writes them.
            let slot = self.elicitation.read().unwrap();
            if !self.elicitation_modes.read().unwrap().accepts(params) {
                return None;
            }
            return Some(Arc::new(ElicitationDefaults(slot.clone()?)));
        }
        self.handler_for(method)
    }

    /// The handler for an input method. Elicitation answers get the schema defaults of
    /// omitted fields filled in (SEP-1034), sampling requests and answers their tool checks
    /// (SEP-1577), on both routes.
    pub fn handler_for(&self, method: &str) -> Option<Arc<dyn InputHandler>> {
        let kind = InputKind::of_method(method)?;
        let handler = self.handler(kind)?;
        Some(match kind {
            InputKind::Elicitation => Arc::new(ElicitationDefaults(handler)),
            InputKind::Sampling => Arc::new(super::sampling::Checked {
                handler,
                tools_declared: self.sampling_tools,
            }),
            InputKind::Roots => handler,
        })
    }

    pub fn set_notification(&self, f: Option<NotificationFn>) {
        let old = std::mem::replace(&mut *self.notification.write().unwrap(), f);
        drop(old);
    }

    pub fn set_log(&self, f: Option<LogFn>) {
        let old = std::mem::replace(&mut *self.log.write().unwrap(), f);
        drop(old);
    }

    /// Lets the response cache drop what a notification makes stale; runs before the
    /// notification reaches a listener or subscription, so a host reacting to it never reads
    /// the stale entry.
    pub fn invalidate(&self, method: &str, params: &Value) {
        if let Some(cache) = &self.cache {
            cache.on_notification(method, params);
        }
    }

    pub fn notify(&self, method: &str, params: &Value) {
        let f = self.notification.read().unwrap().clone();
        if let Some(f) = f {
            f(method, params);
        }
    }

    pub fn log(&self, source: &str, level: &'static str, message: &str) {
        let f = self.log.read().unwrap().clone();
        if let Some(f) = f {
            f(&LogLine {
                source: source.to_string(),
                level,
                message: message.to_string(),
            });
        }
    }

    /// Drops every handler and listener (on close), outside the locks.
    pub fn clear(&self) {
        for kind in [InputKind::Elicitation, InputKind::Sampling, InputKind::Roots] {
            self.set_handler(kind, None);
        }
        self.set_notification(None);
        self.set_log(None);
    }
}

/// Fills the `default` of every requested field the user left out of an accepted elicitation;
/// a URL-mode answer loses any `content` (its `accept` only says the user agreed to open it).
struct ElicitationDefaults(Arc<dyn InputHandler>);

impl InputHandler for ElicitationDefaults {
    fn handle(&self, request: InputRequest) -> BoxFuture<'static, Result<Value, HandlerError>> {
        let params = request.params.as_ref();
        let url_mode = params.and_then(|p| p.get("mode")).and_then(Value::as_str) == Some("url");
        let schema = params.and_then(|p| p.get("requestedSchema")).cloned();
        let answer = self.0.handle(request);
        Box::pin(async move {
            let mut answer = answer.await?;
            if url_mode {
                if let Some(obj) = answer.as_object_mut() {
                    obj.remove("content");
                }
            } else if let Some(schema) = schema {
                fill_defaults(&mut answer, &schema);
            }
            Ok(answer)
        })
    }
}

fn fill_defaults(answer: &mut Value, schema: &Value) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    let Some(obj) = answer.as_object_mut() else { return };
    if obj.get("action").and_then(Value::as_str) != Some("accept") {
        return;
    }
    let content = obj
        .entry("content")
        .or_insert_with(|| Value::Object(Default::default()));
    let Some(content) = content.as_object_mut() else { return };
    for (name, property) in properties {
        if let Some(default) = property.get("default") {
            content.entry(name.clone()).or_insert_with(|| default.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fill_defaults;
    use serde_json::json;

    #[test]
    fn accepted_answers_get_defaults_for_omitted_fields_only() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "email": {"type": "string"}}});
        let mut answer = json!({"action": "accept", "content": {"age": 41}});
        fill_defaults(&mut answer, &schema);
        assert_eq!(
            answer,
            json!({"action": "accept", "content": {"age": 41, "name": "John Doe"}})
        );
        let mut declined = json!({"action": "decline"});
        fill_defaults(&mut declined, &schema);
        assert_eq!(declined, json!({"action": "decline"}));
        let mut bare = json!({"action": "accept"});
        fill_defaults(&mut bare, &schema);
        assert_eq!(
            bare,
            json!({"action": "accept", "content": {"name": "John Doe", "age": 30}})
        );
    }
}
