//! The tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`), client side: a `tools/call`
//! answered with `resultType: "task"` is followed to its end by polling `tasks/get` at the
//! server's `pollIntervalMs`; `input_required` states are answered with the MRTR handlers
//! through `tasks/update` (each key once: polls repeat keys until the answer is applied);
//! cancelling the call sends `tasks/cancel`. A host that kept a task id resumes it in a new
//! process with [`Client::resume_task`].
//!
//! The call's timeout bounds the wait for the task ([`Bound`]): when it passes, the call fails
//! with `Timeout`, `tasks/cancel` goes out (bounded by [`CANCEL_TIMEOUT`]) and polling stops
//! with the call. Each poll is a request with the call's own per-request timeout, never past
//! the bound. `max_total` ends the wait too but leaves the task running, to be resumed.

use super::mrtr::{pause, Round};
use super::observe::AttrValue;
use super::wait::Wait;
use super::{Client, Connection, Reply, RequestOptions};
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::{methods, Era};
use serde_json::{json, Map, Value};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// The extension's identifier, declared under `clientCapabilities.extensions`.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

pub(crate) const TASKS_GET: &str = "tasks/get";
pub(crate) const TASKS_UPDATE: &str = "tasks/update";
pub(crate) const TASKS_CANCEL: &str = "tasks/cancel";

/// A task status listener: the task object (`taskId`, `status`, `statusMessage?`,
/// `pollIntervalMs`, `ttlMs`, `createdAt`, ...) on creation and on every change of status or
/// status message.
pub type TaskStatusFn = Arc<dyn Fn(&Value) + Send + Sync>;

/// Without a `pollIntervalMs` the client polls every second; the server's value is clamped so
/// a hostile or buggy one neither spins the client nor parks it for hours.
const DEFAULT_POLL: Duration = Duration::from_secs(1);
const MIN_POLL: Duration = Duration::from_millis(10);
const MAX_POLL: Duration = Duration::from_secs(60);
/// The bound on the `tasks/cancel` sent when a followed call ends early (cancelled, or its
/// timeout passed): the host's call waits at most this long past its own end.
const CANCEL_TIMEOUT: Duration = Duration::from_secs(1);

impl Client {
    /// Sets (`None`: removes) the client's task status listener; it sees every task any call
    /// follows, before the call's own `RequestOptions::on_task_status`.
    pub fn on_task_status(&self, listener: Option<TaskStatusFn>) {
        let old = std::mem::replace(&mut *self.inner.task_listener.write().unwrap(), listener);
        drop(old);
    }

    /// Whether a `resultType: "task"` answer to `method` is valid: `tools/call` when the
    /// extension is declared, and `tasks/get` (whose examples in the SEP use it).
    pub(super) fn task_allowed(&self, method: &str) -> bool {
        (method == methods::TOOLS_CALL && self.inner.config.tasks) || method == TASKS_GET
    }

    /// Follows the task a `tools/call` created to its final result. `what` names the call in
    /// errors; `since` is when the host's wait for the task began (the send of the leg the task
    /// answered, or the start of a resume).
    pub(super) async fn follow_task(
        &self,
        conn: &Connection,
        created: Value,
        opts: &RequestOptions,
        wait: &Wait,
        (what, since): (&str, Instant),
    ) -> Result<Reply> {
        let id = task_id(&created)?.to_string();
        let mut bound = Bound::new(wait, since);
        let outcome = self.poll_to_end(conn, &id, created, opts, wait, &mut bound).await;
        match outcome {
            Err(e) if e.kind() == ErrorKind::Cancelled && cancelled_now(wait) => {
                // The host gave the call up: tell the server (cooperative; its answer does not matter).
                let _ = self.cancel_quietly(conn, &id, opts).await;
                Err(e)
            }
            Err(e) if e.kind() == ErrorKind::Timeout && bound.passed() => {
                // The call's timeout passed with the task unfinished: as a plain call's timeout
                // tells the server to stop, so does this one.
                let status = bound.status.take().unwrap_or_default();
                let e = wait.timed_out(&format!("{what} (task {id:?}, still {status})"));
                Err(match self.cancel_quietly(conn, &id, opts).await {
                    Ok(()) => e.note("tasks/cancel sent"),
                    Err(why) => e.note(&format!("tasks/cancel failed: {}", why.message())),
                })
            }
            // The total cap is the host's cap on its wait: the task goes on server-side.
            Err(e) if e.kind() == ErrorKind::Timeout => {
                Err(e.note(&format!("task {id:?} goes on: resume_task follows it again")))
            }
            outcome => outcome,
        }
    }

    /// `tasks/cancel` for a follow that ended early, bounded by [`CANCEL_TIMEOUT`] (the call
    /// is over: its own cancel token and limits no longer apply).
    async fn cancel_quietly(&self, conn: &Connection, id: &str, opts: &RequestOptions) -> Result<()> {
        let bounded = Wait {
            timeout: Some(CANCEL_TIMEOUT),
            ..Wait::default()
        };
        self.task_request(conn, TASKS_CANCEL, id, None, opts, &bounded)
            .await
            .map(drop)
    }

    /// Resumes following a task created earlier (possibly by another process): polls it to its
    /// end as a blocking `tools/call` would, and returns the tool's result.
    pub async fn resume_task(&self, task_id: &str, opts: &RequestOptions) -> Result<Value> {
        self.resume_task_reply(task_id, opts).await?.into_value()
    }

    pub(crate) async fn resume_task_reply(&self, task_id: &str, opts: &RequestOptions) -> Result<Reply> {
        let since = Instant::now();
        // One operation: the first `tasks/get` and the polls to the task's end.
        let mut op = self.begin(TASKS_GET, &Map::new(), opts)?;
        let outcome = async {
            let conn = self.task_connection(&op.wait, &op.opts).await?;
            let task = self
                .task_request(&conn, TASKS_GET, task_id, None, &op.opts, &op.wait)
                .await?;
            self.follow_task(&conn, task, &op.opts, &op.wait, ("resume_task", since))
                .await
        }
        .await;
        if op.observed() {
            let ended = match &outcome {
                Ok(reply) => Ok(reply.is_tool_error()),
                Err(e) => Err(e),
            };
            self.end(&mut op, ended);
        }
        outcome
    }

    /// One `tasks/get`: the task as the server has it now.
    pub async fn get_task(&self, task_id: &str, opts: &RequestOptions) -> Result<Value> {
        self.task_operation(TASKS_GET, task_id, None, opts).await
    }

    /// `tasks/cancel` (cooperative: poll or resume to see the task end as `cancelled`).
    pub async fn cancel_task(&self, task_id: &str, opts: &RequestOptions) -> Result<()> {
        self.task_operation(TASKS_CANCEL, task_id, None, opts).await.map(drop)
    }

    /// One task request the host asked for, as an operation of its own (trace context, span).
    async fn task_operation(
        &self,
        method: &str,
        task_id: &str,
        input_responses: Option<Value>,
        opts: &RequestOptions,
    ) -> Result<Value> {
        let mut op = self.begin(method, &Map::new(), opts)?;
        let outcome = async {
            let conn = self.task_connection(&op.wait, &op.opts).await?;
            self.task_request(&conn, method, task_id, input_responses, &op.opts, &op.wait)
                .await
        }
        .await;
        self.end(&mut op, outcome.as_ref().map(|_| false));
        outcome
    }

    /// `tasks/update` with answers the host gathered itself (after an `InputRequired` error
    /// from a followed task); resume the task afterwards.
    pub async fn update_task(&self, task_id: &str, input_responses: Value, opts: &RequestOptions) -> Result<()> {
        if !input_responses.is_object() {
            return Err(Error::invalid("input_responses must be a JSON object"));
        }
        let keys: Vec<String> = input_responses
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k.clone())
            .collect();
        self.task_operation(TASKS_UPDATE, task_id, Some(input_responses), opts)
            .await?;
        self.inner.task_answers.add(task_id, keys);
        Ok(())
    }

    /// The connection for a task operation sent with `opts` (a connect it starts is made for it).
    async fn task_connection(&self, wait: &Wait, opts: &RequestOptions) -> Result<Arc<Connection>> {
        if !self.inner.config.tasks {
            return Err(Error::invalid(
                "the tasks extension is not enabled; set \"tasks\": true in the configuration",
            ));
        }
        let conn = self
            .connection_for(wait, || super::observe::ConnectFor::of(opts))
            .await?;
        if conn.era != Era::Modern {
            let why = format!("the tasks extension does not exist in protocol {}", conn.version());
            return Err(Error::new(ErrorKind::Unsupported, why));
        }
        Ok(conn)
    }

    async fn task_request(
        &self,
        conn: &Connection,
        method: &str,
        id: &str,
        input_responses: Option<Value>,
        opts: &RequestOptions,
        wait: &Wait,
    ) -> Result<Value> {
        let mut params = Map::new();
        params.insert("taskId".into(), json!(id));
        if let Some(responses) = input_responses {
            params.insert("inputResponses".into(), responses);
        }
        // Caller `_meta` and manual MRTR fields belong to the tool call, not to its polls.
        let plain = RequestOptions {
            meta: None,
            input_responses: None,
            request_state: None,
            ..opts.clone()
        };
        let answer = self.exchange(conn, method, &params, &plain, wait).await?.into_value()?;
        if method == TASKS_GET {
            task_id(&answer)?;
        }
        Ok(answer)
    }

    fn emit(&self, task: &Value, opts: &RequestOptions) {
        let listener = self.inner.task_listener.read().unwrap().clone();
        if let Some(f) = listener {
            f(task);
        }
        if let Some(f) = &opts.on_task_status {
            f(task);
        }
    }

    async fn poll_to_end(
        &self,
        conn: &Connection,
        id: &str,
        mut task: Value,
        opts: &RequestOptions,
        wait: &Wait,
        bound: &mut Bound,
    ) -> Result<Reply> {
        let mut seen: Option<(String, Option<String>)> = None;
        // Keys sent before (by `update_task`, or a follow that gave up) stay answered.
        let mut answered: HashSet<String> = self.inner.task_answers.of(id);
        let mut idle_polls = 0u32;
        loop {
            if task_id(&task)? != id {
                return Err(Error::protocol(format!("tasks/get for {id:?} answered another task")));
            }
            let status = field_str(&task, "status")
                .ok_or_else(|| Error::protocol(format!("task {id:?} has no status")))?
                .to_string();
            let now = (status.clone(), field_str(&task, "statusMessage").map(str::to_string));
            if seen.as_ref() != Some(&now) {
                self.emit(&task, opts);
                if seen.is_some() && wait.reset_on_progress {
                    // A change of status or status message is the task's progress.
                    bound.restart();
                }
                seen = Some(now);
            }
            bound.status = Some(status.clone());
            if matches!(status.as_str(), "completed" | "failed" | "cancelled") {
                self.inner.task_answers.forget(id);
            }
            match status.as_str() {
                "completed" => {
                    return match task.get("result") {
                        Some(result @ Value::Object(_)) => Ok(Reply::from(result.clone())),
                        _ => Err(Error::protocol(format!(
                            "completed task {id:?} carries no result object"
                        ))),
                    }
                }
                "failed" => return Err(failure(id, &task)),
                "cancelled" => {
                    return Err(Error::new(ErrorKind::Cancelled, format!("task {id:?} was cancelled")));
                }
                "input_required" => {
                    let requests = match task.get("inputRequests") {
                        None | Some(Value::Null) => Map::new(),
                        Some(Value::Object(m)) => m.clone(),
                        Some(other) => return Err(Error::protocol(format!("inputRequests is not an object: {other}"))),
                    };
                    let fresh: Map<String, Value> =
                        requests.into_iter().filter(|(k, _)| !answered.contains(k)).collect();
                    if fresh.is_empty() {
                        // Every key is answered and the server has not applied it yet: keep
                        // polling, but not forever.
                        idle_polls += 1;
                        let max = self.inner.config.input_required_max_rounds;
                        if idle_polls > max {
                            return Err(Error::input_required(
                                ErrorKind::InputRoundsExceeded,
                                format!("task {id:?} stayed input_required for {max} polls after every request was answered"),
                                Round { requests: Map::new(), state: None }.into_data(task),
                            ));
                        }
                    } else {
                        idle_polls = 0;
                        let keys: Vec<String> = fresh.keys().cloned().collect();
                        let round = Round {
                            requests: fresh,
                            state: None,
                        };
                        let responses = match self.fulfil(&round, &task, wait).await {
                            Ok(r) => r,
                            Err(e) if e.kind() == ErrorKind::InputRequired => {
                                return Err(e.note(&format!(
                                    "the task {id:?} goes on: answer with update_task, then resume_task"
                                )))
                            }
                            Err(e) => {
                                let _ = self.cancel_quietly(conn, id, opts).await;
                                return Err(e);
                            }
                        };
                        self.task_request(conn, TASKS_UPDATE, id, Some(Value::Object(responses)), opts, wait)
                            .await?;
                        self.inner.task_answers.add(id, keys.iter().cloned());
                        answered.extend(keys);
                        // An answered round is a new leg: the wait starts again, as in MRTR.
                        bound.restart();
                    }
                }
                "working" => idle_polls = 0,
                other => return Err(Error::protocol(format!("task {id:?} has an unknown status {other:?}"))),
            }
            if cancelled_now(wait) {
                return Err(Error::new(
                    ErrorKind::Cancelled,
                    "the call was cancelled while its task ran",
                ));
            }
            let next = async {
                pause(poll_interval(&task), wait, &self.inner.shutdown).await?;
                wait.note("mcp.task.poll", || {
                    vec![("mcp.task.id", AttrValue::Str(id.to_string()))]
                });
                self.task_request(conn, TASKS_GET, id, None, opts, wait).await
            };
            // The bound ends the wait between polls and in one (its answer is then not wanted).
            task = match bound.until {
                Some(at) => tokio::time::timeout_at(at, next)
                    .await
                    .map_err(|_| Error::new(ErrorKind::Timeout, "the task's bound passed"))??,
                None => next.await?,
            };
        }
    }
}

/// The host's wait for a followed task: the call's timeout from the moment the wait began,
/// restarted by each answered input round and, when the call asked for it
/// (`reset_timeout_on_progress`), by each change of the task's status or status message.
/// Without a timeout it never passes (`max_total` and the cancel token still end the wait).
struct Bound {
    limit: Option<Duration>,
    until: Option<Instant>,
    /// The task's last status, for the error when the bound passes.
    status: Option<String>,
}

impl Bound {
    fn new(wait: &Wait, since: Instant) -> Bound {
        Bound {
            limit: wait.timeout,
            until: wait.timeout.map(|t| since + t),
            status: None,
        }
    }

    fn restart(&mut self) {
        self.until = self.limit.map(|t| Instant::now() + t);
    }

    fn passed(&self) -> bool {
        self.until.is_some_and(|at| Instant::now() >= at)
    }
}

/// Input keys answered per task id, kept until the task ends (at most `MAX_TASKS_REMEMBERED`
/// tasks: a host that never resumes a task must not grow this without bound).
#[derive(Default)]
pub(crate) struct AnsweredKeys(std::sync::Mutex<std::collections::HashMap<String, HashSet<String>>>);

const MAX_TASKS_REMEMBERED: usize = 1024;

impl AnsweredKeys {
    fn of(&self, id: &str) -> HashSet<String> {
        self.0.lock().unwrap().get(id).cloned().unwrap_or_default()
    }
    fn add(&self, id: &str, keys: impl IntoIterator<Item = String>) {
        let mut tasks = self.0.lock().unwrap();
        if !tasks.contains_key(id) && tasks.len() >= MAX_TASKS_REMEMBERED {
            let oldest = tasks.keys().next().cloned();
            if let Some(k) = oldest {
                tasks.remove(&k);
            }
        }
        tasks.entry(id.to_string()).or_default().extend(keys);
    }
    fn forget(&self, id: &str) {
        self.0.lock().unwrap().remove(id);
    }
}

fn cancelled_now(wait: &Wait) -> bool {
    wait.cancel.as_ref().is_some_and(|c| c.is_cancelled())
}

/// The wait before the next poll: the task's `pollIntervalMs`, clamped.
fn poll_interval(task: &Value) -> Duration {
    task.get("pollIntervalMs")
        .and_then(Value::as_u64)
        .map_or(DEFAULT_POLL, Duration::from_millis)
        .clamp(MIN_POLL, MAX_POLL)
}

fn field_str<'a>(task: &'a Value, key: &str) -> Option<&'a str> {
    task.get(key).and_then(Value::as_str)
}

fn task_id(task: &Value) -> Result<&str> {
    field_str(task, "taskId")
        .filter(|id| !id.is_empty())
        .ok_or_else(|| Error::protocol("the task has no taskId"))
}

/// A `failed` task's JSON-RPC `error`, as the error of the call.
fn failure(id: &str, task: &Value) -> Error {
    let error = task.get("error");
    let code = error.and_then(|e| e.get("code")).and_then(Value::as_i64);
    let message = error
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .unwrap_or("(no message)")
        .to_string();
    match code {
        Some(code) => Error::rpc(code, message, error.and_then(|e| e.get("data")).cloned())
            .context(&format!("task {id:?} failed")),
        None => Error::protocol(format!("task {id:?} failed without a JSON-RPC error object")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_intervals_are_clamped_and_default_to_a_second() {
        assert_eq!(poll_interval(&json!({})), DEFAULT_POLL);
        assert_eq!(poll_interval(&json!({"pollIntervalMs": 0})), MIN_POLL);
        assert_eq!(
            poll_interval(&json!({"pollIntervalMs": 250})),
            Duration::from_millis(250)
        );
        assert_eq!(poll_interval(&json!({"pollIntervalMs": u64::MAX})), MAX_POLL);
        assert_eq!(poll_interval(&json!({"pollIntervalMs": "soon"})), DEFAULT_POLL);
    }

    #[test]
    fn failed_tasks_surface_their_error() {
        let e = failure("t1", &json!({"error": {"code": -32603, "message": "boom"}}));
        assert_eq!(e.rpc_error().map(|r| r.code), Some(-32603));
        assert!(e.message().contains("t1") && e.message().contains("boom"));
        assert_eq!(failure("t1", &json!({})).kind(), ErrorKind::ProtocolViolation);
    }
}
