//! The client: connection lifecycle, the request path (envelope stamping, version retry,
//! `resultType` checks), the MRTR driver, and the public Rust API.

mod cache;
mod era_cache;
mod handlers;
mod input_modes;
mod json_schema;
mod lifecycle;
mod mrtr;
mod options;
mod output_schema;
mod reconnect;
mod reply;
mod session;
mod skills;
mod subscription;
mod tasks;

use crate::base::cancel;
pub use crate::base::CancelToken;
pub use cache::CacheMode;
pub use era_cache::EraCache;
pub use handlers::{HandlerError, InputHandler, InputKind, InputRequest, LogFn, LogLine, NotificationFn};
pub use input_modes::{ElicitationModes, ManualInput};
pub(crate) use options::{check_env_name, timeout_ms, MAX_TIMEOUT_MS};
pub use options::{ClientConfig, ConnectMode, Progress, ProgressFn, ReconnectPolicy, RequestOptions};
pub use reconnect::{ConnectionState, ConnectionStateFn};
pub use session::SubscriptionEvent;
#[cfg(feature = "fuzzing")]
pub use skills::fuzz as skills_fuzz;
pub use skills::SKILLS_EXTENSION;
pub use subscription::Subscription;
pub use tasks::{TaskStatusFn, TASKS_EXTENSION};

use crate::error::{Error, ErrorKind, Result};
use crate::protocol::era::{self, Era};
use crate::protocol::{codes, meta, methods, ResultType};
use handlers::Hooks;
pub(crate) use reply::Reply;
use serde_json::{json, Map, Value};
use session::{Session, Wait};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use tokio::time::Instant;

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
        json!({
            "era": self.era.as_str(),
            "protocolVersion": self.protocol_version,
            "capabilities": self.capabilities,
            "serverInfo": self.server_info,
            "instructions": self.instructions,
            "raw": self.raw,
        })
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
    /// SEP-2549 response cache (`client/cache`).
    cache: Arc<cache::ResponseCache>,
    /// Output schemas from the last `tools/list` (`client/output_schema`).
    tool_schemas: output_schema::ToolSchemas,
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
        Client {
            inner: Arc::new(Inner {
                auth: crate::auth::AuthContext::new(config.oauth.as_deref(), config.http_url(), &config.client_info),
                config,
                hooks: Arc::new(Hooks::with_cache(cache.clone())),
                cache,
                tool_schemas: output_schema::ToolSchemas::default(),
                conn: RwLock::new(None),
                connect_lock: tokio::sync::Mutex::new(()),
                connecting: std::sync::Mutex::new(None),
                closed: AtomicBool::new(false),
                shutdown: CancelToken::new(),
                log_level: RwLock::new(None),
                ever_connected: AtomicBool::new(false),
                on_state: RwLock::new(None),
                task_listener: RwLock::new(None),
            }),
        }
    }

    /// The configuration this client was made with.
    pub fn config(&self) -> &ClientConfig {
        &self.inner.config
    }

    /// Registers (or with `None` removes) the handler for one kind of input; registering
    /// declares the matching client capability.
    pub fn set_handler(&self, kind: InputKind, handler: Option<Arc<dyn InputHandler>>) {
        self.inner.hooks.set_handler(kind, handler);
    }

    /// Answers `elicitation/create` requests (and declares the capability).
    pub fn on_elicitation(&self, handler: impl InputHandler) {
        self.set_handler(InputKind::Elicitation, Some(Arc::new(handler)));
    }
    /// Registers the elicitation handler for the given modes and declares exactly those
    /// (`elicitation.url` for URL mode). Requests in another mode are left to the host
    /// (`InputRequired`), like a kind without a handler.
    pub fn on_elicitation_modes(&self, modes: ElicitationModes, handler: impl InputHandler) {
        self.set_elicitation_handler(Some(Arc::new(handler)), modes);
    }
    /// As [`Client::on_elicitation_modes`], for a shared handler (`None` removes it).
    pub fn set_elicitation_handler(&self, handler: Option<Arc<dyn InputHandler>>, modes: ElicitationModes) {
        self.inner.hooks.set_elicitation(handler, modes);
    }
    /// Answers `sampling/createMessage` requests (and declares the capability).
    pub fn on_sampling(&self, handler: impl InputHandler) {
        self.set_handler(InputKind::Sampling, Some(Arc::new(handler)));
    }
    /// Answers `roots/list` requests (and declares the capability).
    pub fn on_roots(&self, handler: impl InputHandler) {
        self.set_handler(InputKind::Roots, Some(Arc::new(handler)));
    }

    /// Every server notification (progress excluded): list_changed, resources/updated,
    /// log messages, listen traffic.
    pub fn on_notification(&self, listener: Option<NotificationFn>) {
        self.inner.hooks.set_notification(listener);
    }

    /// The server's stderr lines and the library's warnings.
    pub fn on_log(&self, listener: Option<LogFn>) {
        self.inner.hooks.set_log(listener);
    }

    /// The capabilities this client declares: the host's override, or one entry per handler.
    pub fn capabilities(&self, era: Era) -> Value {
        if let Some(caps) = &self.inner.config.capabilities {
            return caps.clone();
        }
        let hooks = &self.inner.hooks;
        let manual = &self.inner.config.manual_input;
        let mut caps = Map::new();
        if let Some(elicitation) = input_modes::elicitation_capability(hooks.elicitation_modes(), manual.elicitation) {
            caps.insert("elicitation".into(), elicitation);
        }
        if hooks.handler(InputKind::Sampling).is_some() || manual.sampling {
            caps.insert("sampling".into(), json!({}));
        }
        if hooks.handler(InputKind::Roots).is_some() || manual.roots {
            let roots = match era {
                Era::Legacy => json!({"listChanged": true}),
                Era::Modern => json!({}),
            };
            caps.insert("roots".into(), roots);
        }
        let mut extensions = Map::new();
        if self.inner.config.skills {
            extensions.insert(SKILLS_EXTENSION.into(), json!({}));
        }
        if self.inner.config.tasks && era == Era::Modern {
            extensions.insert(TASKS_EXTENSION.into(), json!({}));
        }
        // SEP-990: a client authorizing through the enterprise IdP says so.
        if self
            .inner
            .config
            .oauth
            .as_ref()
            .is_some_and(|o| o.grant == crate::auth::Grant::Enterprise)
        {
            extensions.insert(crate::auth::ENTERPRISE_AUTH_EXTENSION.into(), json!({}));
        }
        if !extensions.is_empty() {
            caps.insert("extensions".into(), Value::Object(extensions));
        }
        Value::Object(caps)
    }

    /// The browser step of OAuth authorization-code flows (see `crate::auth`): the handler
    /// opens the authorization URL and hands back the redirect. `None` removes it.
    pub fn set_authorization_handler(&self, handler: Option<Arc<dyn crate::auth::AuthorizationHandler>>) {
        self.inner.auth.set_handler(handler);
    }

    /// As [`Client::set_authorization_handler`] with a handler.
    pub fn on_authorization(&self, handler: impl crate::auth::AuthorizationHandler) {
        self.set_authorization_handler(Some(Arc::new(handler)));
    }

    /// Where OAuth credentials are kept, per authorization-server issuer; `None` restores the
    /// in-memory default.
    pub fn set_token_store(&self, store: Option<Arc<dyn crate::auth::TokenStore>>) {
        self.inner.auth.set_store(store);
    }

    /// Where the assertion grants (`oauth.grant` `jwt_bearer`, `enterprise`) get the JWTs the
    /// configuration does not hold (see `crate::auth::AssertionProvider`); `None` removes it.
    pub fn set_assertion_provider(&self, provider: Option<Arc<dyn crate::auth::AssertionProvider>>) {
        self.inner.auth.set_assertion_provider(provider);
    }

    /// Drops every handler and listener (their captured state is released once no call uses
    /// them any more).
    pub fn clear_handlers(&self) {
        self.inner.hooks.clear();
        self.inner.auth.set_handler(None);
        self.inner.auth.set_store(None);
        self.inner.auth.set_assertion_provider(None);
        self.on_connection_state(None);
    }

    /// What the server said about itself, once connected.
    pub fn server_info(&self) -> Option<ServerInfo> {
        self.inner.conn.read().unwrap().as_ref().map(|c| c.info())
    }

    /// Whether [`Client::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.inner.closed.load(Ordering::SeqCst)
    }

    /// The live connection, connecting first if needed. A connect started here runs as its own
    /// task: the caller's cancellation or deadline stops the wait, not the connect.
    async fn connection(&self, wait: &Wait) -> Result<Arc<Connection>> {
        if self.is_closed() {
            return Err(Error::closed());
        }
        if let Some(conn) = self.inner.conn.read().unwrap().clone() {
            // With a reconnect policy a lost connection goes to `connect`, which replaces it.
            if self.inner.config.reconnect.is_none() || conn.session.closed_error().is_none() {
                return Ok(conn);
            }
        }
        let client = self.clone();
        let connecting = tokio::spawn(async move { client.connect().await });
        tokio::select! {
            joined = connecting => match joined {
                Ok(outcome) => outcome.map(drop)?,
                Err(e) => return Err(Error::new(ErrorKind::Internal, format!("the connect task failed: {e}"))),
            },
            _ = cancel::cancelled(wait.cancel.as_ref()) => {
                return Err(Error::new(ErrorKind::Cancelled, "cancelled while connecting"))
            }
            _ = session::sleep_until(wait.deadline) => {
                return Err(Error::new(ErrorKind::Timeout, "the call's total time ran out while connecting"))
            }
        }
        self.inner.conn.read().unwrap().clone().ok_or_else(Error::closed)
    }

    fn wait_for(&self, opts: &RequestOptions) -> Wait {
        let timeout = opts.timeout.unwrap_or(self.inner.config.request_timeout);
        Wait {
            timeout: (!timeout.is_zero()).then_some(timeout),
            reset_on_progress: opts.reset_timeout_on_progress,
            deadline: opts.max_total.filter(|d| !d.is_zero()).map(|d| Instant::now() + d),
            cancel: opts.cancel.clone(),
            on_progress: opts.on_progress.clone(),
            notify_cancel: true,
        }
    }

    /// Params with the `_meta` this era needs: caller entries, then the reserved keys.
    fn stamp(&self, conn: &Connection, params: &Map<String, Value>, opts: &RequestOptions) -> Map<String, Value> {
        let mut params = params.clone();
        let mut meta_obj = match params.remove("_meta") {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        if let Some(extra) = &opts.meta {
            meta_obj.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        if conn.era == Era::Modern {
            meta_obj.insert(meta::PROTOCOL_VERSION.into(), json!(conn.version()));
            meta_obj.insert(meta::CLIENT_CAPABILITIES.into(), self.capabilities(Era::Modern));
            meta_obj.insert(meta::CLIENT_INFO.into(), self.inner.config.client_info.clone());
            let level = opts
                .log_level
                .clone()
                .or_else(|| self.inner.log_level.read().unwrap().clone());
            if let Some(level) = level {
                meta_obj.insert(meta::LOG_LEVEL.into(), json!(level));
            }
        }
        if !meta_obj.is_empty() {
            params.insert("_meta".into(), Value::Object(meta_obj));
        }
        params
    }

    /// One request/response on the live connection: stamping, the -32022 version retry, and
    /// the `resultType` rules. MRTR driving sits above this.
    async fn exchange(
        &self,
        conn: &Connection,
        method: &str,
        params: &Map<String, Value>,
        opts: &RequestOptions,
        wait: &Wait,
    ) -> Result<Reply> {
        let mut retried = false;
        loop {
            let stamped = self.stamp(conn, params, opts);
            match conn.session.request(method, stamped, wait).await {
                Err(e) if conn.era == Era::Modern && !retried && is_code(&e, codes::UNSUPPORTED_PROTOCOL_VERSION) => {
                    retried = true;
                    let supported = supported_versions(&e);
                    match era::mutual_version(supported.iter().map(String::as_str), Some(Era::Modern)) {
                        // (The same version again is one plain retry: the server listed it.)
                        Some(v) => *conn.version.write().unwrap() = v.to_string(),
                        None => return Err(version_mismatch(&supported)),
                    }
                }
                Err(e) => return Err(e),
                Ok(result) => {
                    let kind = result.result_type()?;
                    if kind == ResultType::InputRequired && !methods::allows_input_required(method) {
                        return Err(Error::protocol(format!(
                            "the server answered {method} with input_required"
                        )));
                    }
                    if kind == ResultType::Task && !self.task_allowed(method) {
                        return Err(Error::protocol(format!(
                            "the server answered {method} with a task, which this request did not declare it accepts"
                        )));
                    }
                    return Ok(result);
                }
            }
        }
    }

    /// Sends any request, driving MRTR for the three methods that allow it.
    pub async fn request(&self, method: &str, params: Option<Value>, opts: &RequestOptions) -> Result<Value> {
        self.request_reply(method, params, opts).await?.into_value()
    }

    /// As [`Client::request`], the result decoded only as far as the client needed it.
    /// Cacheable methods (SEP-2549, `client/cache`) are answered from a fresh entry when there
    /// is one; every `tools/list` answer updates the tools' output schemas.
    pub(crate) async fn request_reply(
        &self,
        method: &str,
        params: Option<Value>,
        opts: &RequestOptions,
    ) -> Result<Reply> {
        let params = match params {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m,
            Some(_) => return Err(Error::invalid("params must be a JSON object")),
        };
        let manual = opts.input_responses.is_some() || opts.request_state.is_some();
        let lookup = match opts.cache {
            CacheMode::Bypass => None,
            _ if manual => None,
            _ => self.inner.cache.lookup(method, &params),
        };
        if let (Some(at), CacheMode::Use) = (&lookup, opts.cache) {
            if let Some(hit) = self.inner.cache.get(at) {
                return Ok(hit);
            }
        }
        let first_page = !params.contains_key("cursor");
        let (reply, retried) = self.request_fresh(method, params, opts).await?;
        // Tool schemas are only kept for output validation.
        let lists_tools = method == methods::TOOLS_LIST && self.inner.config.validate_output_schema;
        if (lookup.is_some() && !retried) || lists_tools {
            // Results reaching here are complete (input_required ends as an error).
            let json = reply.json_text();
            if let Some(at) = lookup.filter(|_| !retried) {
                self.inner.cache.put(&at, json.as_bytes());
            }
            if lists_tools {
                self.inner.tool_schemas.absorb(json.as_bytes(), first_page);
            }
        }
        Ok(reply)
    }

    /// The uncached request path; the flag says whether the result answered an MRTR retry.
    async fn request_fresh(
        &self,
        method: &str,
        mut params: Map<String, Value>,
        opts: &RequestOptions,
    ) -> Result<(Reply, bool)> {
        let wait = self.wait_for(opts);
        // With a reconnect policy an idempotent request that lost its connection goes again on
        // the new one (bounded: each round is a reconnect, which has its own attempt limit).
        let rounds = self
            .inner
            .config
            .reconnect
            .as_ref()
            .map_or(1, |p| p.max_attempts.max(1));
        let mut round = 0;
        loop {
            round += 1;
            let conn = self.connection(&wait).await?;
            let outcome = if methods::allows_input_required(method) {
                // The last (without a policy: the only) round takes the params, no copy.
                let leg = if round >= rounds {
                    std::mem::take(&mut params)
                } else {
                    params.clone()
                };
                self.drive(&conn, method, leg, opts, &wait).await
            } else if opts.input_responses.is_some() || opts.request_state.is_some() {
                Err(Error::invalid(format!(
                    "{method} does not take inputResponses or requestState"
                )))
            } else {
                self.exchange(&conn, method, &params, opts, &wait)
                    .await
                    .map(|r| (r, false))
            };
            match outcome {
                Err(e) if self.lost(&conn, &e) && self.drop_lost(&conn, &e).await => {
                    if !reconnect::idempotent(method) {
                        return Err(Self::not_retried(method, e));
                    }
                    if round >= rounds {
                        return Err(e);
                    }
                }
                other => return other,
            }
        }
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
        let reply = self
            .request_reply(methods::TOOLS_CALL, Some(Value::Object(params)), opts)
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
            if !output_schema::has_structured_content(&reply.json_text()) {
                return Ok(());
            }
            let list_opts = RequestOptions {
                timeout: opts.timeout,
                max_total: opts.max_total,
                cancel: opts.cancel.clone(),
                ..RequestOptions::default()
            };
            if let Err(e) = self.list_all(ListKind::Tools, &list_opts).await {
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

    /// Modern: stamps `level` on every later request. Legacy: sends `logging/setLevel`.
    pub async fn set_log_level(&self, level: &str, opts: &RequestOptions) -> Result<()> {
        if !meta::is_log_level(level) {
            return Err(Error::invalid(format!("unknown log level {level:?}")));
        }
        let wait = self.wait_for(opts);
        let conn = self.connection(&wait).await?;
        if conn.era == Era::Legacy {
            let params = json!({"level": level}).as_object().cloned().unwrap_or_default();
            self.exchange(&conn, methods::LOGGING_SET_LEVEL, &params, opts, &wait)
                .await?;
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
        self.exchange(&conn, method, &params, opts, &wait).await.map(drop)
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

fn is_code(e: &Error, code: i64) -> bool {
    e.rpc_error().is_some_and(|r| r.code == code)
}

fn supported_versions(e: &Error) -> Vec<String> {
    e.rpc_error()
        .and_then(|r| r.data.as_ref())
        .and_then(|d| d.get("supported"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

fn version_mismatch(supported: &[String]) -> Error {
    Error::new(
        ErrorKind::VersionMismatch,
        format!(
            "no mutual protocol version: the server supports {supported:?}, this client {:?}",
            era::MODERN_VERSIONS
                .iter()
                .chain(era::LEGACY_VERSIONS)
                .collect::<Vec<_>>()
        ),
    )
}
