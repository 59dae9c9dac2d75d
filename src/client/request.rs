//! The request path: the call's wait (timeout, total cap, cancel), `_meta` stamping for the
//! era, the exchange with its -32022 retry, and the response cache in front of it.

use super::observe::{self, AttrValue, Operation};
use super::session::Params;
use super::wait::TimeoutFrom;
use super::{reconnect, CacheMode, Client, Connection, Reply, RequestOptions, Wait};
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::era::{self, Era};
use crate::protocol::{codes, jsonrpc, meta, methods, trace, ResultType};
use serde_json::{json, Map, Value};
use std::borrow::Cow;
use std::sync::Arc;
use tokio::time::Instant;

impl Client {
    pub(super) fn wait_for(&self, opts: &RequestOptions) -> Wait {
        let timeout = opts.timeout.unwrap_or(self.inner.config.request_timeout);
        let total = opts.max_total.filter(|d| !d.is_zero());
        Wait {
            timeout: (!timeout.is_zero()).then_some(timeout),
            timeout_from: match opts.timeout {
                Some(_) => TimeoutFrom::Call,
                None => TimeoutFrom::Client,
            },
            reset_on_progress: opts.reset_timeout_on_progress,
            deadline: total.map(|d| Instant::now() + d),
            total,
            cancel: opts.cancel.clone(),
            on_progress: opts.on_progress.clone(),
            notify_cancel: true,
            trail: None,
        }
    }

    /// The log level a modern request asks for: the call's, else the client's.
    fn log_level(&self, opts: &RequestOptions) -> Option<String> {
        opts.log_level
            .clone()
            .or_else(|| self.inner.log_level.read().unwrap().clone())
    }

    /// Params with the `_meta` this era needs: caller entries, then the reserved keys.
    pub(super) fn stamp(
        &self,
        conn: &Connection,
        params: &Map<String, Value>,
        opts: &RequestOptions,
    ) -> Map<String, Value> {
        let mut params = params.clone();
        let mut meta_obj = match params.remove("_meta") {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        if let Some(extra) = &opts.meta {
            meta_obj.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        if let Some(trace) = &opts.trace {
            trace.insert_into(&mut meta_obj);
        }
        if conn.era == Era::Modern {
            let (version, caps) = (json!(conn.version()), self.capabilities(Era::Modern));
            for (key, value) in self.modern_meta(&version, &caps) {
                meta_obj.insert(key.into(), value.clone());
            }
            if let Some(level) = self.log_level(opts) {
                meta_obj.insert(meta::LOG_LEVEL.into(), json!(level));
            }
        }
        if !meta_obj.is_empty() {
            params.insert("_meta".into(), Value::Object(meta_obj));
        }
        params
    }

    /// The reserved `_meta` members of every modern request, in their order on the wire (the
    /// log level, when set, follows them): `stamp` puts them in the map, `meta_head` writes them.
    fn modern_meta<'a>(&'a self, version: &'a Value, caps: &'a Value) -> [(&'static str, &'a Value); 3] {
        [
            (meta::PROTOCOL_VERSION, version),
            (meta::CLIENT_CAPABILITIES, caps),
            (meta::CLIENT_INFO, &self.inner.config.client_info),
        ]
    }

    /// The modern `_meta` members (protocol version, capabilities, client info) as JSON text,
    /// serialised once per connection and again only when the version (a -32022 retry) or the
    /// capabilities (a handler registered since) change.
    fn meta_head(&self, conn: &Connection) -> (Arc<[u8]>, Arc<str>) {
        // Read before the capabilities are: a handler registered meanwhile makes the next
        // request build the text again.
        let inputs = self.inner.hooks.inputs_generation();
        let version = conn.version.read().unwrap();
        let mut cached = conn.meta_head.lock().unwrap();
        if let Some(head) = cached
            .as_ref()
            .filter(|h| *h.version == **version && h.inputs == inputs)
        {
            return (head.text.clone(), head.version.clone());
        }
        let caps = self.capabilities(Era::Modern);
        let version_value = Value::String(version.clone());
        let text: Arc<[u8]> = jsonrpc::members_text(self.modern_meta(&version_value, &caps))
            .unwrap_or_default()
            .into();
        let version: Arc<str> = version.as_str().into();
        *cached = Some(MetaHead {
            version: version.clone(),
            inputs,
            text: text.clone(),
        });
        (text, version)
    }

    /// One request/response on the live connection: stamping, the -32022 version retry, and
    /// the `resultType` rules. MRTR driving sits above this.
    pub(super) async fn exchange(
        &self,
        conn: &Connection,
        method: &str,
        params: &Map<String, Value>,
        opts: &RequestOptions,
        wait: &Wait,
    ) -> Result<Reply> {
        self.exchange_args(conn, method, params, jsonrpc::Apart::default(), opts, wait)
            .await
    }

    /// As [`Client::exchange`], with members kept apart from `params` (the C ABI's tool name and
    /// `arguments_json`): written into the request line as they are, put in a map (the
    /// arguments decoded) only for a transport that takes values or a request whose `_meta` is
    /// merged.
    pub(super) async fn exchange_args(
        &self,
        conn: &Connection,
        method: &str,
        params: &Map<String, Value>,
        apart: jsonrpc::Apart<'_>,
        opts: &RequestOptions,
        wait: &Wait,
    ) -> Result<Reply> {
        for meta in [opts.meta.as_ref(), params.get("_meta").and_then(Value::as_object)]
            .into_iter()
            .flatten()
        {
            trace::check_meta(meta).map_err(Error::invalid)?;
        }
        let mut retried = false;
        // Written from borrowed parts (no copy of the params, the `_meta` text cached) unless
        // the caller brings `_meta` entries, which `stamp` merges, or the transport takes values.
        let parts = conn.session.takes_lines() && opts.meta.is_none() && !params.contains_key("_meta");
        loop {
            let (head, level);
            let body = if parts {
                let modern = conn.era == Era::Modern;
                head = modern.then(|| self.meta_head(conn));
                level = modern.then(|| self.log_level(opts)).flatten();
                Params::Parts {
                    params,
                    apart,
                    version: head.as_ref().map(|(_, version)| &**version),
                    meta: jsonrpc::MetaParts {
                        head: head.as_ref().map(|(text, _)| &**text).unwrap_or_default(),
                        trace: opts.trace.as_ref().map(|t| t.members_text()).unwrap_or_default(),
                        log_level: level.as_deref(),
                        progress_token: None,
                    },
                }
            } else if !apart.is_empty() {
                let mut full = Map::new();
                if let Some(name) = apart.name {
                    full.insert(jsonrpc::NAME.into(), Value::from(name));
                }
                full.extend(params.iter().map(|(k, v)| (k.clone(), v.clone())));
                if let Some(arguments) = apart.arguments {
                    let value = serde_json::from_str(arguments.get())
                        .map_err(|e| Error::invalid(format!("arguments are not valid JSON: {e}")))?;
                    full.insert(jsonrpc::ARGUMENTS.into(), value);
                }
                Params::Owned(self.stamp(conn, &full, opts))
            } else {
                Params::Owned(self.stamp(conn, params, opts))
            };
            match conn.session.request(method, body, wait).await {
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
        self.request_reply_args(method, params, jsonrpc::Apart::default(), opts)
            .await
    }

    /// As [`Client::request_reply`], with members kept apart from `params` (see
    /// [`Client::exchange_args`]); `params` must then not hold them.
    pub(crate) async fn request_reply_args(
        &self,
        method: &str,
        params: Option<Value>,
        apart: jsonrpc::Apart<'_>,
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
            _ if manual || !apart.is_empty() => None,
            _ => self.inner.cache.lookup(method, &params),
        };
        let first_page = !params.contains_key("cursor");
        if let (Some(at), CacheMode::Use) = (&lookup, opts.cache) {
            if let Some(hit) = self.inner.cache.get(at) {
                return self.pinned(method, first_page, hit, opts).await;
            }
        }
        let (reply, retried) = self.request_fresh(method, params, apart, opts).await?;
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
        self.pinned(method, first_page, reply, opts).await
    }

    /// The uncached request path; the flag says whether the result answered an MRTR retry.
    /// The call's trace source is asked here, once for this operation; with an observer set, the
    /// operation ends as a span (see [`Client::begin`]).
    pub(super) async fn request_fresh(
        &self,
        method: &str,
        params: Map<String, Value>,
        apart: jsonrpc::Apart<'_>,
        opts: &RequestOptions,
    ) -> Result<(Reply, bool)> {
        let mut op = self.begin_apart(method, &params, apart.name, opts)?;
        let payloads = method == methods::TOOLS_CALL && self.inner.config.span_tool_payloads;
        if let (true, Some((_, operation))) = (payloads, op.span.as_mut()) {
            let given = match apart.arguments {
                Some(raw) => Some(raw.get().to_string()),
                None => params.get(jsonrpc::ARGUMENTS).map(Value::to_string),
            };
            operation.arguments(given.unwrap_or_else(|| "{}".into()));
        }
        let outcome = self.send_fresh(method, params, apart, &op.opts, &op.wait).await;
        if op.observed() {
            let ended = match &outcome {
                Ok((reply, _)) => Ok(method == methods::TOOLS_CALL && reply.is_tool_error()),
                Err(e) => Err(e),
            };
            let result = match (&outcome, payloads) {
                (Ok((reply, _)), true) => Some(reply.json_text().to_string()),
                _ => None,
            };
            self.end_with(&mut op, ended, result);
        }
        outcome
    }

    /// `opts` with the trace context of its source, asked now, when the call has no trace
    /// context of its own (in `trace` or its `_meta`); the source is then gone from them.
    pub(super) fn traced<'a>(&self, opts: &'a RequestOptions) -> Result<Cow<'a, RequestOptions>> {
        let own_meta = |opts: &RequestOptions| {
            opts.meta
                .as_ref()
                .is_some_and(|m| m.contains_key(trace::TRACEPARENT) || m.contains_key(trace::BAGGAGE))
        };
        Ok(match (&opts.trace, &opts.trace_source) {
            (None, Some(source)) if !own_meta(opts) => Cow::Owned(RequestOptions {
                trace: source()?,
                trace_source: None,
                ..opts.clone()
            }),
            _ => Cow::Borrowed(opts),
        })
    }

    /// Starts operation `method` (one MCP request and what it takes to answer it: MRTR legs,
    /// task polls, a retry after a reconnect): asks the call's trace source when the call has no
    /// trace context of its own, and starts the span when an observer is set. Send with the
    /// returned options and wait, then [`Client::end`].
    pub(super) fn begin<'a>(
        &self,
        method: &str,
        params: &Map<String, Value>,
        opts: &'a RequestOptions,
    ) -> Result<Begun<'a>> {
        self.begin_apart(method, params, None, opts)
    }

    /// [`Client::begin`] for a request whose `name` is kept apart from `params`.
    fn begin_apart<'a>(
        &self,
        method: &str,
        params: &Map<String, Value>,
        name: Option<&str>,
        opts: &'a RequestOptions,
    ) -> Result<Begun<'a>> {
        let opts = self.traced(opts)?;
        let mut wait = self.wait_for(&opts);
        let span = self.observer().map(|observer| {
            let trace = opts.trace.as_ref();
            let op = Operation::start(method, params, name, trace, opts.meta.as_ref(), &mut wait);
            (observer, op)
        });
        Ok(Begun { opts, wait, span })
    }

    /// Ends an operation [`Client::begin`] started with `outcome` (`Ok(true)`: a tool result
    /// with `isError`): its span goes to the observer (or the call's span sink), now.
    pub(super) fn end(&self, op: &mut Begun<'_>, outcome: std::result::Result<bool, &Error>) {
        self.end_with(op, outcome, None)
    }

    /// [`Client::end`], with a `tools/call` result's JSON text for `gen_ai.tool.call.result`.
    fn end_with(&self, op: &mut Begun<'_>, outcome: std::result::Result<bool, &Error>, result: Option<String>) {
        let Some((observer, operation)) = op.span.take() else {
            return;
        };
        let mut facts = match self.inner.conn.read().unwrap().as_ref() {
            Some(c) => observe::Facts {
                version: Some(c.version()),
                session: c.session.session_id(),
                network_version: c.session.protocol_version(),
                result: None,
                server_name: None,
            },
            None => observe::Facts::default(),
        };
        facts.result = result;
        facts.server_name = observer.server_name().map(str::to_string);
        let span = operation.finish(outcome, &facts, &self.inner.config.transport);
        match &op.opts.spans {
            Some(sink) => sink.push(observer, span),
            None => observe::deliver(&*observer, &span),
        }
    }

    async fn send_fresh(
        &self,
        method: &str,
        mut params: Map<String, Value>,
        apart: jsonrpc::Apart<'_>,
        opts: &RequestOptions,
        wait: &Wait,
    ) -> Result<(Reply, bool)> {
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
            let conn = self.connection_for(wait, || observe::ConnectFor::of(opts)).await?;
            let outcome = if methods::allows_input_required(method) {
                // The last (without a policy: the only) round takes the params, no copy.
                let leg = if round >= rounds {
                    std::mem::take(&mut params)
                } else {
                    params.clone()
                };
                self.drive(&conn, method, leg, apart, opts, wait).await
            } else if opts.input_responses.is_some() || opts.request_state.is_some() {
                Err(Error::invalid(format!(
                    "{method} does not take inputResponses or requestState"
                )))
            } else {
                self.exchange_args(&conn, method, &params, apart, opts, wait)
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
                    wait.note("mcp.reconnect.retry", || {
                        vec![("mcp.retry.attempt", AttrValue::Int(round.into()))]
                    });
                }
                other => return other,
            }
        }
    }
}

/// An operation [`Client::begin`] started: the options to send it with (the call's, with the
/// trace context its source gave), its wait, and its span while observed.
pub(super) struct Begun<'a> {
    pub opts: Cow<'a, RequestOptions>,
    pub wait: Wait,
    span: Option<(Arc<dyn observe::Observer>, Operation)>,
}

impl Begun<'_> {
    /// Whether the operation makes a span (an observer was set when it began): what only the
    /// span needs (reading a tool result's `isError`) is skipped otherwise.
    pub(super) fn observed(&self) -> bool {
        self.span.is_some()
    }
}

/// A connection's serialised modern `_meta` members and what they were made from.
pub(super) struct MetaHead {
    version: Arc<str>,
    /// `Hooks::inputs_generation` when it was made.
    inputs: u64,
    text: Arc<[u8]>,
}

pub(super) fn is_code(e: &Error, code: i64) -> bool {
    e.rpc_error().is_some_and(|r| r.code == code)
}

pub(super) fn supported_versions(e: &Error) -> Vec<String> {
    e.rpc_error()
        .and_then(|r| r.data.as_ref())
        .and_then(|d| d.get("supported"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

pub(super) fn version_mismatch(supported: &[String]) -> Error {
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
