//! Multi Round-Trip Requests (SEP-2322): fulfil a round's `inputRequests` with the registered
//! handlers, then re-issue the original request with `inputResponses` and the byte-exact
//! `requestState`, up to `input_required_max_rounds`.

use super::cancel::{cancelled, CancelToken};
use super::handlers::InputRequest;
use super::observe::AttrValue;
use super::session::sleep_until;
use super::wait::Wait;
use super::{Client, Connection, Reply, RequestOptions};
use crate::error::{Error, ErrorKind, InputRequiredData, Result};
use crate::protocol::{jsonrpc, Era, ResultType};
use serde_json::{json, Map, Value};
use std::time::Duration;
use tokio::task::JoinSet;
use tokio::time::Instant;

/// State-only rounds back off from 50 ms, doubling, to 250 ms (reset by a round with requests).
const BACKOFF_START: Duration = Duration::from_millis(50);
const BACKOFF_MAX: Duration = Duration::from_millis(250);

const INPUT_RESPONSES: &str = "inputResponses";
const REQUEST_STATE: &str = "requestState";

impl Client {
    /// Sends `method` and drives `input_required` results to a final one. The flag says whether
    /// the final result answered a leg carrying `inputResponses` or `requestState` (such
    /// results are never cached).
    pub(super) async fn drive(
        &self,
        conn: &Connection,
        method: &str,
        mut base: Map<String, Value>,
        apart: jsonrpc::Apart<'_>,
        opts: &RequestOptions,
        wait: &Wait,
    ) -> Result<(Reply, bool)> {
        if conn.era == Era::Legacy && (opts.input_responses.is_some() || opts.request_state.is_some()) {
            // Legacy servers ask through requests of their own and would ignore these.
            return Err(Error::invalid(format!(
                "input_responses and request_state are for modern servers; this connection speaks {}",
                conn.version()
            )));
        }
        // Retry fields never belong to the base: each leg carries only its own round's.
        base.remove(INPUT_RESPONSES);
        base.remove(REQUEST_STATE);
        // The first leg is the base itself unless the caller drives MRTR by hand.
        let manual;
        let first = if opts.input_responses.is_none() && opts.request_state.is_none() {
            &base
        } else {
            let mut leg = base.clone();
            if let Some(responses) = &opts.input_responses {
                if !responses.is_object() {
                    return Err(Error::invalid("input_responses must be a JSON object"));
                }
                leg.insert(INPUT_RESPONSES.into(), responses.clone());
            }
            if let Some(state) = &opts.request_state {
                leg.insert(REQUEST_STATE.into(), json!(state));
            }
            manual = leg;
            &manual
        };
        let mut retried = opts.input_responses.is_some() || opts.request_state.is_some();
        // When the leg a task answers was sent: the call's timeout for the task counts from it.
        let mut leg = Instant::now();
        let mut reply = self.exchange_args(conn, method, first, apart, opts, wait).await?;
        let mut rounds = 0u32;
        let mut backoff = BACKOFF_START;
        while reply.result_type()? == ResultType::InputRequired {
            let result = reply.into_value()?;
            let round = Round::parse(&result)?;
            rounds += 1;
            let max = self.inner.config.input_required_max_rounds;
            if rounds > max {
                return Err(Error::input_required(
                    ErrorKind::InputRoundsExceeded,
                    format!("the server still answered input_required after {max} rounds (SEP-2322)"),
                    round.into_data(result),
                ));
            }
            let mut retry = base.clone();
            if round.requests.is_empty() {
                pause(backoff, wait, &self.inner.shutdown).await?;
                backoff = (backoff * 2).min(BACKOFF_MAX);
            } else {
                backoff = BACKOFF_START;
                let responses = self.fulfil(&round, &result, wait).await?;
                retry.insert(INPUT_RESPONSES.into(), Value::Object(responses));
            }
            if let Some(state) = &round.state {
                retry.insert(REQUEST_STATE.into(), json!(state));
            }
            retried = true;
            wait.note("mcp.mrtr.round", || {
                vec![
                    ("mcp.mrtr.round", AttrValue::Int(rounds.into())),
                    ("mcp.mrtr.input_requests", AttrValue::Int(round.requests.len() as i64)),
                ]
            });
            leg = Instant::now();
            reply = self.exchange_args(conn, method, &retry, apart, opts, wait).await?;
        }
        if reply.result_type()? == ResultType::Task {
            // Tasks extension: the work goes on server-side; follow it to its result (never
            // cached: it comes from `tools/call`).
            // Boxed: a rare leg that would otherwise size every call's future.
            let follow = Box::pin(self.follow_task(conn, reply.into_value()?, opts, wait, (method, leg)));
            return Ok((follow.await?, true));
        }
        Ok((reply, retried))
    }

    /// Answers every entry of one round, concurrently; the first failure cancels the rest.
    pub(super) async fn fulfil(&self, round: &Round, result: &Value, wait: &Wait) -> Result<Map<String, Value>> {
        // Every entry must have a handler before any handler runs: no half-answered rounds.
        let mut jobs = Vec::with_capacity(round.requests.len());
        let mut unanswered = Map::new();
        for (key, entry) in &round.requests {
            let method = entry.get("method").and_then(Value::as_str);
            let params = entry.get("params").filter(|p| !p.is_null()).cloned();
            let handler = method.and_then(|m| self.inner.hooks.handler_for_request(m, params.as_ref()));
            match (method, handler) {
                (Some(method), Some(handler)) => jobs.push((key.clone(), method.to_string(), params, handler)),
                _ => {
                    unanswered.insert(key.clone(), entry.clone());
                }
            }
        }
        if !unanswered.is_empty() {
            let what: Vec<String> = unanswered
                .iter()
                .map(|(key, entry)| {
                    let method = entry.get("method").and_then(Value::as_str).unwrap_or("(no method)");
                    match entry.get("params").and_then(|p| p.get("mode")).and_then(Value::as_str) {
                        Some(mode) => format!("{key:?} ({method}, mode {mode})"),
                        None => format!("{key:?} ({method})"),
                    }
                })
                .collect();
            let mut data = round.clone().into_data(result.clone());
            data.unanswered = Value::Object(unanswered);
            return Err(Error::input_required(
                ErrorKind::InputRequired,
                format!(
                    "no registered handler answers {}; answer the input requests yourself and retry \
                     with input_responses and request_state",
                    what.join(", ")
                ),
                data,
            ));
        }
        // The round's callbacks are the call's: cancelling the call's token waits for them.
        let round_cancel = CancelToken::child(wait.cancel.as_ref());
        let mut set = JoinSet::new();
        for (key, method, params, handler) in jobs {
            let request = InputRequest {
                method: method.clone(),
                params,
                cancel: round_cancel.clone(),
            };
            set.spawn(crate::base::boxed(async move {
                (key, method, handler.handle(request).await)
            }));
        }
        let until = match (wait.timeout.map(|t| Instant::now() + t), wait.deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let mut responses = Map::new();
        let outcome = loop {
            tokio::select! {
                joined = set.join_next() => match joined {
                    None => break Ok(()),
                    Some(Ok((key, _, Ok(Value::Object(answer))))) => {
                        responses.insert(key, Value::Object(answer));
                    }
                    Some(Ok((key, method, Ok(other)))) => break Err(Error::new(
                        ErrorKind::HandlerFailed,
                        format!("the {method} handler (key {key:?}) answered with {other}, not a JSON object"),
                    )),
                    Some(Ok((key, method, Err(e)))) => break Err(Error::new(
                        ErrorKind::HandlerFailed,
                        format!("the {method} handler (key {key:?}) failed: {}", e.message),
                    )),
                    Some(Err(join)) => break Err(Error::new(
                        ErrorKind::HandlerFailed,
                        format!("an input handler panicked or was aborted: {join}"),
                    )),
                },
                _ = sleep_until(until) => break Err(Error::new(ErrorKind::Timeout, "input handlers did not answer in time")),
                _ = cancelled(wait.cancel.as_ref()) => break Err(Error::new(ErrorKind::Cancelled, "the call was cancelled while handlers ran")),
                _ = self.inner.shutdown.cancelled() => break Err(Error::closed()),
            }
        };
        if outcome.is_err() {
            round_cancel.cancel();
            set.abort_all();
        }
        outcome.map(|()| responses)
    }
}

/// One `input_required` result, parsed (or one poll's new task input requests).
#[derive(Clone)]
pub(super) struct Round {
    pub requests: Map<String, Value>,
    pub state: Option<String>,
}

impl Round {
    fn parse(result: &Value) -> Result<Round> {
        let requests = match result.get("inputRequests") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(other) => return Err(Error::protocol(format!("inputRequests is not an object: {other}"))),
        };
        let state = match result.get("requestState") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => return Err(Error::protocol(format!("requestState is not a string: {other}"))),
        };
        if requests.is_empty() && state.is_none() {
            return Err(Error::protocol(
                "input_required result with neither inputRequests nor requestState",
            ));
        }
        Ok(Round { requests, state })
    }

    pub(super) fn into_data(self, result: Value) -> InputRequiredData {
        InputRequiredData {
            input_requests: Value::Object(self.requests),
            request_state: self.state,
            result,
            unanswered: Value::Object(Map::new()),
        }
    }
}

/// The pause before a state-only retry; cancellation and the call's deadline cut it short.
pub(super) async fn pause(delay: Duration, wait: &Wait, shutdown: &CancelToken) -> Result<()> {
    let until = Instant::now() + delay;
    if wait.deadline.is_some_and(|d| d < until) {
        return Err(wait.total_ran_out("the call (waiting between rounds)"));
    }
    tokio::select! {
        _ = tokio::time::sleep_until(until) => Ok(()),
        _ = cancelled(wait.cancel.as_ref()) => Err(Error::new(ErrorKind::Cancelled, "the call was cancelled between rounds")),
        _ = shutdown.cancelled() => Err(Error::closed()),
    }
}
