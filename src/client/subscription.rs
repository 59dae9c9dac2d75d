//! `subscriptions/listen` (modern): a handle that yields the stream's notifications.

use super::session::{Session, SubReceiver, SubscriptionEvent};
use super::wait::Wait;
use super::{Client, RequestOptions};
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::{methods, Era, RequestId};
use serde_json::{Map, Value};
use std::sync::Arc;
use tokio::sync::Mutex;

const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

/// A live subscription. Events arrive in order; after `Closed`, `next` returns `None`.
/// Dropping it cancels the subscription. At most 1024 events wait to be taken: past that the
/// subscription ends (after them) with an `Io` error saying so, and the server is told to stop.
pub struct Subscription {
    id: RequestId,
    acknowledged: Value,
    session: Arc<Session>,
    events: Mutex<(SubReceiver, bool)>,
}

impl Subscription {
    /// The id of the `subscriptions/listen` request that carries this subscription.
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// The filter the server acknowledged (the subset it honours).
    pub fn acknowledged(&self) -> &Value {
        &self.acknowledged
    }

    /// The next notification, or the closing event; `None` once closed.
    pub async fn next(&self) -> Option<SubscriptionEvent> {
        let mut guard = self.events.lock().await;
        let (rx, done) = &mut *guard;
        if *done {
            return None;
        }
        let event = rx.recv().await;
        *done = matches!(event, SubscriptionEvent::Closed(_));
        Some(event)
    }

    /// Ends the subscription (stdio: `notifications/cancelled` for the listen id).
    pub async fn cancel(&self) {
        self.session.unlisten(&self.id).await;
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.session.drop_listen(&self.id);
    }
}

impl Client {
    /// Opens a `subscriptions/listen` stream with `filter` (a `SubscriptionFilter` object) and
    /// waits for the server's acknowledgement.
    pub async fn listen(&self, filter: Value, opts: &RequestOptions) -> Result<Subscription> {
        if !filter.is_object() {
            return Err(Error::invalid("the subscription filter must be a JSON object"));
        }
        // An operation until the server acknowledges the stream.
        let mut op = self.begin(methods::SUBSCRIPTIONS_LISTEN, &Map::new(), opts)?;
        let outcome = self.listen_acknowledged(filter, &op.opts, &op.wait).await;
        self.end(&mut op, outcome.as_ref().map(|_| false));
        outcome
    }

    async fn listen_acknowledged(&self, filter: Value, opts: &RequestOptions, wait: &Wait) -> Result<Subscription> {
        let conn = self
            .connection_for(wait, || super::observe::ConnectFor::of(opts))
            .await?;
        if conn.era != Era::Modern {
            return Err(Error::new(
                ErrorKind::Unsupported,
                "subscriptions/listen needs a 2026-07-28 server",
            ));
        }
        let mut params = Map::new();
        params.insert("notifications".into(), filter);
        let params = self.stamp(&conn, &params, opts);
        let (id, mut rx) = conn.session.listen(params).await?;
        let first = async {
            match wait.timeout {
                Some(t) => tokio::time::timeout(t, rx.recv()).await.ok(),
                None => Some(rx.recv().await),
            }
        };
        let first = tokio::select! {
            ev = first => ev,
            _ = super::cancel::cancelled(wait.cancel.as_ref()) => None,
        };
        let acknowledged = match first {
            Some(SubscriptionEvent::Notification { method, params }) if method == ACKNOWLEDGED => {
                params.get("notifications").cloned().unwrap_or(Value::Null)
            }
            Some(SubscriptionEvent::Closed(Some(e))) => return Err(e),
            Some(SubscriptionEvent::Closed(None)) => {
                return Err(Error::protocol(
                    "the server ended the subscription before acknowledging it",
                ))
            }
            Some(SubscriptionEvent::Notification { method, .. }) => {
                conn.session.unlisten(&id).await;
                return Err(Error::protocol(format!(
                    "expected the listen acknowledgement, got {method}"
                )));
            }
            None => {
                conn.session.unlisten(&id).await;
                let cancelled = wait.cancel.as_ref().is_some_and(|c| c.is_cancelled());
                return Err(if cancelled {
                    Error::new(ErrorKind::Cancelled, "subscriptions/listen was cancelled")
                } else {
                    Error::new(
                        ErrorKind::Timeout,
                        "the server did not acknowledge subscriptions/listen in time",
                    )
                });
            }
        };
        Ok(Subscription {
            id,
            acknowledged,
            session: conn.session.clone(),
            events: Mutex::new((rx, false)),
        })
    }
}
