//! The client: the public Rust API over the connection lifecycle (`lifecycle`), the request path
//! (`request`), the MRTR driver (`mrtr`) and the handlers (`registration`).

mod cache;
mod era_cache;
mod handlers;
mod input_modes;
mod json_schema;
mod lifecycle;
mod mrtr;
pub mod observe;
#[cfg(feature = "tracing")]
mod observe_tracing;
mod options;
mod output_schema;
mod pinning;
mod reconnect;
mod registration;
mod reply;
mod request;
mod sampling;
mod session;
mod skills;
mod subscription;
mod tasks;
mod wait;

use crate::base::cancel;
pub use crate::base::CancelToken;
pub use cache::CacheMode;
pub use era_cache::EraCache;
pub use handlers::{HandlerError, InputHandler, InputKind, InputRequest, LogFn, LogLine, NotificationFn};
pub use input_modes::{ElicitationModes, ManualInput};
// One validator for output schemas and for the arguments `export` dispatches.
pub(crate) use json_schema::{resolve as schema_ref, Schema};
pub(crate) use options::{check_env_name, timeout_ms, MAX_TIMEOUT_MS};
pub use options::{ClientConfig, ConnectMode, Progress, ProgressFn, ReconnectPolicy, RequestOptions, TraceSource};
pub use reconnect::{ConnectionState, ConnectionStateFn};
use request::{supported_versions, version_mismatch};
pub use session::SubscriptionEvent;
#[cfg(feature = "fuzzing")]
pub use skills::fuzz as skills_fuzz;
pub use skills::SKILLS_EXTENSION;
pub use subscription::Subscription;
pub use tasks::{TaskStatusFn, TASKS_EXTENSION};

use crate::error::{Error, ErrorKind, Result};
use crate::protocol::era::Era;
use crate::protocol::{jsonrpc, meta, methods};
use handlers::Hooks;
pub(crate) use reply::Reply;
use serde_json::{json, Map, Value};
use session::Session;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use wait::Wait;

/// What the server told us about itself at connect time.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerInfo {
    /// The protocol era spoken on this connection.
    pub era: Era,
    /// The negotiated (legacy) or current (modern) protocol version.
    pub protocol_version: String,
    /// The server's declared capabilities.
    pub capabilities: Value,
    /// The server's `Implementation` object, when it sent one.
    pub server_info: Option<Value>,
    /// The server's instructions for the model, if it gave any.
    pub instructions: Option<String>,
    /// The raw `server/discover` or `initialize` result.
    pub raw: Value,
}

impl ServerInfo {
    /// `{"era", "protocolVersion", "capabilities", "serverInfo", "instructions", "raw"}`.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.json_view(&self.protocol_version)).unwrap_or(Value::Null)
    }

    fn json_view<'a>(&'a self, protocol_version: &'a str) -> ServerInfoJson<'a> {
        ServerInfoJson {
            era: self.era.as_str(),
            protocol_version,
            capabilities: &self.capabilities,
            server_info: &self.server_info,
            instructions: &self.instructions,
            raw: &self.raw,
        }
    }
}

/// `ServerInfo`'s JSON shape, borrowing its parts.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ServerInfoJson<'a> {
    era: &'a str,
    protocol_version: &'a str,
    capabilities: &'a Value,
    server_info: &'a Option<Value>,
    instructions: &'a Option<String>,
    raw: &'a Value,
}

impl ServerInfoJson<'_> {
    fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_else(|_| b"null".to_vec())
    }
}

/// The four paginated list methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    /// `tools/list`
    Tools,
    /// `prompts/list`
    Prompts,
    /// `resources/list`
    Resources,
    /// `resources/templates/list`
    ResourceTemplates,
}

impl ListKind {
    /// The list method's name.
    pub fn method(self) -> &'static str {
        match self {
            ListKind::Tools => methods::TOOLS_LIST,
            ListKind::Prompts => methods::PROMPTS_LIST,
            ListKind::Resources => methods::RESOURCES_LIST,
            ListKind::ResourceTemplates => methods::RESOURCES_TEMPLATES_LIST,
        }
    }
    /// The result field holding the items.
    pub fn key(self) -> &'static str {
        match self {
            ListKind::Tools => "tools",
            ListKind::Prompts => "prompts",
            ListKind::Resources => "resources",
            ListKind::ResourceTemplates => "resourceTemplates",
        }
    }
}

/// A live connection: one session in one era.
pub(crate) struct Connection {
    session: Arc<Session>,
    era: Era,
    version: RwLock<String>,
    info: ServerInfo,
    /// The modern `_meta` members every request carries, serialised once (`request::MetaHead`).
    meta_head: std::sync::Mutex<Option<request::MetaHead>>,
}

impl Connection {
    fn version(&self) -> String {
        self.version.read().unwrap().clone()
    }
    fn info(&self) -> ServerInfo {
        ServerInfo {
            protocol_version: self.version(),
            ..self.info.clone()
        }
    }

    /// `info().to_json()` as text, written from the connection's own parts (no copy first).
    pub(crate) fn info_json(&self) -> Vec<u8> {
        let version = self.version.read().unwrap();
        self.info.json_view(&version).to_bytes()
    }

    pub(crate) fn era(&self) -> Era {
        self.era
    }
}

struct Inner {
    config: ClientConfig,
    hooks: Arc<Hooks>,
    /// OAuth state and host hooks (the authorization handler, the token store).
    auth: Arc<crate::auth::AuthContext>,
    conn: RwLock<Option<Arc<Connection>>>,
    connect_lock: tokio::sync::Mutex<()>,
    /// The session being set up by `connect`, so `close` can interrupt it.
    connecting: std::sync::Mutex<Option<Arc<Session>>>,
    /// While a connect runs (under `connect_lock`): the operation it is made for, whose trace
    /// context and span sink its handshake spans take (`observe::ConnectFor`).
    connect_for: std::sync::Mutex<Option<observe::ConnectFor>>,
    closed: AtomicBool,
    /// Cancelled by `close`: wakes calls waiting on handlers or between rounds.
    shutdown: CancelToken,
    /// Modern: the log level stamped on every request; legacy: the last level set.
    log_level: RwLock<Option<String>>,
    /// A connect has succeeded once: later connects are reconnects (with a policy).
    ever_connected: AtomicBool,
    on_state: RwLock<Option<ConnectionStateFn>>,
    /// The tasks extension's status listener (`Client::on_task_status`).
    task_listener: RwLock<Option<TaskStatusFn>>,
    /// Receives each operation's span (`observe`); `None`: nothing is observed.
    observer: RwLock<Option<Arc<dyn observe::Observer>>>,
    /// Input keys already answered per task id (`tasks::AnsweredKeys`), so a resumed follow
    /// never asks again for what `update_task` or an earlier follow sent.
    task_answers: tasks::AnsweredKeys,
    /// SEP-2549 response cache (`client/cache`).
    cache: Arc<cache::ResponseCache>,
    /// Output schemas from the last `tools/list` (`client/output_schema`).
    tool_schemas: output_schema::ToolSchemas,
    /// Tool pinning (`crate::pin`), `None` when its policy is off.
    pins: Option<Arc<crate::pin::Pins>>,
}

/// An MCP client. Cheap to clone; all clones share one connection. Every method may be called
/// concurrently from many tasks; requests are multiplexed over the connection.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

impl Client {
    /// A client for `config`; nothing is started until the first call or [`Client::connect`].
    pub fn new(config: ClientConfig) -> Client {
        let cache = Arc::new(cache::ResponseCache::new(
            config.response_cache,
            config.response_cache_max_entries,
        ));
        let pins = config
            .tool_pinning
            .as_ref()
            .and_then(|s| crate::pin::Pins::new(s, crate::pin::identity_of(&config.transport)));
        let hooks = Arc::new(Hooks::new(cache.clone(), config.declares_sampling_tools()));
        Client {
            inner: Arc::new(Inner {
                auth: crate::auth::AuthContext::new(config.oauth.as_deref(), config.http_url(), &config.client_info),
                config,
                hooks,
                cache,
                tool_schemas: output_schema::ToolSchemas::default(),
                pins,
                conn: RwLock::new(None),
                connect_lock: tokio::sync::Mutex::new(()),
                connecting: std::sync::Mutex::new(None),
                connect_for: std::sync::Mutex::new(None),
                closed: AtomicBool::new(false),
                shutdown: CancelToken::new(),
                log_level: RwLock::new(None),
                ever_connected: AtomicBool::new(false),
                on_state: RwLock::new(None),
                task_listener: RwLock::new(None),
                observer: RwLock::new(None),
                task_answers: tasks::AnsweredKeys::default(),
            }),
        }
    }

    /// The configuration this client was made with.
    pub fn config(&self) -> &ClientConfig {
        &self.inner.config
    }

    /// What the server said about itself, once connected.
    pub fn server_info(&self) -> Option<ServerInfo> {
        self.current().map(|c| c.info())
    }

    /// The live connection, if any (no connect).
    pub(crate) fn current(&self) -> Option<Arc<Connection>> {
        self.inner.conn.read().unwrap().clone()
    }

    /// The error that ended the live connection, when it is gone (nothing is attempted: a
    /// reconnect policy reconnects on the next call).
    pub(crate) fn connection_lost(&self) -> Option<Error> {
        self.current().and_then(|c| c.session.closed_error())
    }

    /// Whether [`Client::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.inner.closed.load(Ordering::SeqCst)
    }

    /// The live connection, connecting first if needed. A connect started here runs as its own
    /// task: the caller's cancellation or deadline stops the wait, not the connect.
    async fn connection(&self, wait: &Wait) -> Result<Arc<Connection>> {
        self.connection_for(wait, observe::ConnectFor::default).await
    }

    /// [`Client::connection`] for an operation: a connect it starts has its handshake spans
    /// under the trace context `made_for` gives (asked only then), into its span sink.
    async fn connection_for(
        &self,
        wait: &Wait,
        made_for: impl FnOnce() -> observe::ConnectFor,
    ) -> Result<Arc<Connection>> {
        if self.is_closed() {
            return Err(Error::closed());
        }
        if let Some(conn) = self.current() {
            // With a reconnect policy a lost connection goes to `connect`, which replaces it.
            if self.inner.config.reconnect.is_none() || conn.session.closed_error().is_none() {
                return Ok(conn);
            }
        }
        let client = self.clone();
        let mut made_for = made_for();
        // Without a span sink of the operation's, the handshake's spans are held here and
        // handed over on this thread (the one polling the operation, as its own span is), not
        // on the runtime thread that runs the connect; one ending after this wait gave up goes
        // to its observer there.
        let held = match (&made_for.spans, self.observed()) {
            (None, true) => {
                let sink = observe::SpanSink::new(Arc::new(|job: Box<dyn FnOnce() + Send>| job()));
                made_for.spans = Some(sink.clone());
                Some(sink)
            }
            _ => None,
        };
        let connecting = crate::base::spawn(async move { client.connect_conn(made_for).await });
        let outcome = tokio::select! {
            joined = connecting => match joined {
                Ok(outcome) => outcome,
                Err(e) => Err(Error::new(ErrorKind::Internal, format!("the connect task failed: {e}"))),
            },
            _ = cancel::cancelled(wait.cancel.as_ref()) => {
                Err(Error::new(ErrorKind::Cancelled, "cancelled while connecting"))
            }
            _ = session::sleep_until(wait.deadline) => Err(wait.total_ran_out("the call (waiting for the connection)")),
        };
        if let Some(sink) = held {
            sink.deliver();
        }
        outcome
    }

    /// `tools/call`: runs tool `name` with `arguments`; a tool's own failure is a result with
    /// `isError`, not an `Err`.
    pub async fn call_tool(&self, name: &str, arguments: Option<Value>, opts: &RequestOptions) -> Result<Value> {
        self.call_tool_reply(name, arguments, opts).await?.into_value()
    }

    pub(crate) async fn call_tool_reply(
        &self,
        name: &str,
        arguments: Option<Value>,
        opts: &RequestOptions,
    ) -> Result<Reply> {
        let mut params = Map::new();
        params.insert("name".into(), json!(name));
        match arguments {
            None | Some(Value::Null) => {}
            Some(args @ Value::Object(_)) => {
                params.insert("arguments".into(), args);
            }
            Some(_) => return Err(Error::invalid("tool arguments must be a JSON object")),
        }
        self.call_tool_params(name, params, jsonrpc::Apart::default(), opts)
            .await
    }

    /// As [`Client::call_tool_reply`], the arguments given as checked JSON object text
    /// ([`crate::protocol::jsonrpc::raw_object`]): they travel as that text, and the name as
    /// the caller's string, no map built.
    pub(crate) async fn call_tool_raw(
        &self,
        name: &str,
        arguments: Option<&serde_json::value::RawValue>,
        opts: &RequestOptions,
    ) -> Result<Reply> {
        let apart = jsonrpc::Apart {
            name: Some(name),
            arguments,
        };
        self.call_tool_params(name, Map::new(), apart, opts).await
    }

    async fn call_tool_params(
        &self,
        name: &str,
        params: Map<String, Value>,
        apart: jsonrpc::Apart<'_>,
        opts: &RequestOptions,
    ) -> Result<Reply> {
        if let Some(refused) = self.pin_refusal(name) {
            return Err(refused);
        }
        // The trace source is asked here, once for the call: the output-schema listing it may
        // lead to carries the same context.
        let opts = &*self.traced(opts)?;
        let reply = self
            .request_reply_args(methods::TOOLS_CALL, Some(Value::Object(params)), apart, opts)
            .await?;
        if self.inner.config.validate_output_schema && !opts.skip_output_validation {
            self.check_output(name, &reply, opts).await?;
        }
        Ok(reply)
    }

    /// Checks a tool's result against its declared `outputSchema`. A result with
    /// `structuredContent` from a client that has not seen a `tools/list` yet lists the tools
    /// once first; a result without it is only checked against schemas already known (it has
    /// nothing to validate, and listing for it would add a round trip to every first call).
    /// Results of tools without a schema are not decoded (the C fast path keeps the bytes).
    async fn check_output(&self, name: &str, reply: &Reply, opts: &RequestOptions) -> Result<()> {
        let schemas = &self.inner.tool_schemas;
        if !schemas.known() {
            if !reply.has_structured_content() {
                return Ok(());
            }
            let list_opts = RequestOptions {
                timeout: opts.timeout,
                max_total: opts.max_total,
                cancel: opts.cancel.clone(),
                // The call's operation: its trace context (no source asked again) and sink.
                trace: opts.trace.clone(),
                spans: opts.spans.clone(),
                ..RequestOptions::default()
            };
            // Boxed: a rare leg (once per client) that would otherwise size every call's future.
            if let Err(e) = Box::pin(self.list_all(ListKind::Tools, &list_opts)).await {
                // The call itself succeeded; without the schemas it cannot be checked.
                self.inner.hooks.log(
                    "client",
                    "warning",
                    &format!("tools/list for output schema validation failed, result of {name} not checked: {e}"),
                );
                return Ok(());
            }
        }
        if !schemas.declares(name) {
            return Ok(());
        }
        schemas.check(name, reply.value()?.as_ref())
    }

    /// The authorization context the response cache files `private` entries under (SEP-2549:
    /// "new principal, new cache"). Changing it drops the previous context's private entries;
    /// `public` ones stay shared.
    pub fn set_cache_partition(&self, partition: &str) {
        self.inner.cache.set_partition(partition);
    }

    /// Empties the response cache.
    pub fn clear_cache(&self) {
        self.inner.cache.clear();
    }

    /// The cache of eras `auto` detected per HTTP origin that this client reads and fills
    /// (`ClientConfig::era_cache`; the process's shared one unless the host gave another).
    pub fn era_cache(&self) -> &EraCache {
        &self.inner.config.era_cache
    }

    /// `prompts/get`: prompt `name` filled with `arguments`.
    pub async fn get_prompt(&self, name: &str, arguments: Option<Value>, opts: &RequestOptions) -> Result<Value> {
        self.get_prompt_reply(name, arguments, opts).await?.into_value()
    }

    pub(crate) async fn get_prompt_reply(
        &self,
        name: &str,
        arguments: Option<Value>,
        opts: &RequestOptions,
    ) -> Result<Reply> {
        let mut params = Map::new();
        params.insert("name".into(), json!(name));
        match arguments {
            None | Some(Value::Null) => {}
            Some(Value::Object(args)) => {
                if args.values().any(|v| !v.is_string()) {
                    return Err(Error::invalid("prompt arguments must be strings"));
                }
                params.insert("arguments".into(), Value::Object(args));
            }
            Some(_) => return Err(Error::invalid("prompt arguments must be a JSON object")),
        }
        self.request_reply(methods::PROMPTS_GET, Some(Value::Object(params)), opts)
            .await
    }

    /// `resources/read`: the contents of resource `uri`.
    pub async fn read_resource(&self, uri: &str, opts: &RequestOptions) -> Result<Value> {
        self.read_resource_reply(uri, opts).await?.into_value()
    }

    pub(crate) async fn read_resource_reply(&self, uri: &str, opts: &RequestOptions) -> Result<Reply> {
        self.request_reply(methods::RESOURCES_READ, Some(json!({"uri": uri})), opts)
            .await
    }

    /// `completion/complete` with `{ref, argument, context?}` params.
    pub async fn complete(&self, params: Value, opts: &RequestOptions) -> Result<Value> {
        self.request(methods::COMPLETION_COMPLETE, Some(params), opts).await
    }

    /// One page of a list; `cursor` is the previous page's `nextCursor`.
    pub async fn list(&self, kind: ListKind, cursor: Option<&str>, opts: &RequestOptions) -> Result<Value> {
        self.list_reply(kind, cursor, opts).await?.into_value()
    }

    pub(crate) async fn list_reply(
        &self,
        kind: ListKind,
        cursor: Option<&str>,
        opts: &RequestOptions,
    ) -> Result<Reply> {
        let params = cursor.map(|c| json!({"cursor": c}));
        self.request_reply(kind.method(), params, opts).await
    }

    /// Every page of a list, merged into `{<key>: [...]}`; bounded by `max_pages`, and a
    /// repeated cursor is an error rather than a loop.
    pub async fn list_all(&self, kind: ListKind, opts: &RequestOptions) -> Result<Value> {
        let mut items = Vec::new();
        self.for_each_page(
            kind.method(),
            |cursor| async move { self.list(kind, cursor.as_deref(), opts).await },
            |page| {
                match page.get(kind.key()) {
                    Some(Value::Array(a)) => items.extend(a.iter().cloned()),
                    None => {}
                    Some(_) => return Err(Error::protocol(format!("{} is not an array", kind.key()))),
                }
                Ok(())
            },
        )
        .await?;
        Ok(json!({ kind.key(): items }))
    }

    /// Follows `nextCursor` from the first page to the last, handing each page to `take`: at
    /// most `max_pages` pages, and a cursor the server repeats is an error (it would loop).
    pub(crate) async fn for_each_page<F, Fut>(
        &self,
        method: &str,
        mut fetch: F,
        mut take: impl FnMut(&Value) -> Result<()>,
    ) -> Result<()>
    where
        F: FnMut(Option<String>) -> Fut,
        Fut: std::future::Future<Output = Result<Value>>,
    {
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..self.inner.config.max_pages.max(1) {
            let page = fetch(cursor.take()).await?;
            take(&page)?;
            match page.get("nextCursor") {
                None | Some(Value::Null) => return Ok(()),
                Some(Value::String(next)) if seen.insert(next.clone()) => cursor = Some(next.clone()),
                Some(Value::String(next)) => {
                    return Err(Error::protocol(format!(
                        "{method}: the server repeated the cursor {next:?}"
                    )))
                }
                Some(other) => return Err(Error::protocol(format!("nextCursor {other} is not a string"))),
            }
        }
        Err(Error::protocol(format!(
            "{method} has more than {} pages",
            self.inner.config.max_pages
        )))
    }

    /// `level` is one of the protocol's log levels (the check `set_log_level` makes first, for
    /// callers that refuse a bad level before starting anything).
    pub(crate) fn check_log_level(level: &str) -> Result<()> {
        if !meta::is_log_level(level) {
            return Err(Error::invalid(format!("unknown log level {level:?}")));
        }
        Ok(())
    }

    /// Modern: stamps `level` on every later request. Legacy: sends `logging/setLevel`.
    pub async fn set_log_level(&self, level: &str, opts: &RequestOptions) -> Result<()> {
        Self::check_log_level(level)?;
        let conn = self.connection(&self.wait_for(opts)).await?;
        if conn.era == Era::Legacy {
            let params = json!({"level": level}).as_object().cloned().unwrap_or_default();
            let mut op = self.begin(methods::LOGGING_SET_LEVEL, &params, opts)?;
            let sent = self
                .exchange(&conn, methods::LOGGING_SET_LEVEL, &params, &op.opts, &op.wait)
                .await;
            self.end(&mut op, sent.as_ref().map(|_| false));
            sent?;
        }
        *self.inner.log_level.write().unwrap() = Some(level.to_string());
        Ok(())
    }

    /// A request that exists only in the legacy era.
    async fn legacy_request(&self, method: &str, params: Value, opts: &RequestOptions) -> Result<()> {
        let wait = self.wait_for(opts);
        let conn = self.connection(&wait).await?;
        if conn.era != Era::Legacy {
            let why = format!("{method} does not exist in protocol {}", conn.version());
            return Err(Error::new(ErrorKind::Unsupported, why));
        }
        let params = params.as_object().cloned().unwrap_or_default();
        let mut op = self.begin(method, &params, opts)?;
        let sent = self.exchange(&conn, method, &params, &op.opts, &op.wait).await;
        self.end(&mut op, sent.as_ref().map(|_| false));
        sent.map(drop)
    }

    /// Legacy `ping`.
    pub async fn ping(&self, opts: &RequestOptions) -> Result<()> {
        self.legacy_request(methods::PING, json!({}), opts).await
    }

    /// Legacy `resources/subscribe` (modern servers use [`Client::listen`]).
    pub async fn subscribe_resource(&self, uri: &str, opts: &RequestOptions) -> Result<()> {
        self.legacy_request(methods::RESOURCES_SUBSCRIBE, json!({"uri": uri}), opts)
            .await
    }

    /// `resources/unsubscribe`: ends a subscription made with [`Client::subscribe_resource`].
    pub async fn unsubscribe_resource(&self, uri: &str, opts: &RequestOptions) -> Result<()> {
        self.legacy_request(methods::RESOURCES_UNSUBSCRIBE, json!({"uri": uri}), opts)
            .await
    }

    /// Tells a legacy server the roots changed (modern servers ask for roots per request).
    pub async fn notify_roots_changed(&self) -> Result<()> {
        let conn = self.connection(&Wait::default()).await?;
        if conn.era == Era::Legacy && self.inner.hooks.handler(InputKind::Roots).is_some() {
            conn.session.notify(methods::NOTIFY_ROOTS_LIST_CHANGED, None).await?;
        }
        Ok(())
    }

    /// The synchronous half of `close`: from now on new calls fail with `Closed` and calls
    /// waiting on handlers or between rounds wake up; `close` then shuts the connection down.
    pub fn mark_closed(&self) {
        self.inner.closed.store(true, Ordering::SeqCst);
        self.inner.shutdown.cancel();
    }

    /// Closes the connection: pending calls fail with `Closed`, the server is shut down.
    /// Idempotent; later calls fail with `Closed`.
    pub async fn close(&self) {
        self.mark_closed();
        let connecting = self.inner.connecting.lock().unwrap().clone();
        if let Some(session) = connecting {
            session.close(Error::closed()).await;
        }
        let conn = self.inner.conn.read().unwrap().clone();
        if let Some(conn) = conn {
            conn.session.close(Error::closed()).await;
        }
    }
}
