//! The hub's observability: one span observer and one trace context source for every member,
//! present and added later (a reload's too). Each member's client gets the hub's observer under
//! the member's name, so each record carries `mcp.server.name`; the hub's calls (routed calls
//! and merged lists) take the source as their [`RequestOptions::trace_source`], so the member's
//! requests carry the host's context in `_meta` and each context the source gives has the record
//! of the member operation it went on.

use super::members::HandlerPart;
use super::Hub;
use crate::client::observe::{Observer, SessionRecord, Span};
use crate::client::{ListKind, RequestOptions, TraceSource};
use crate::protocol::methods;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::Arc;

/// The hub's observer as one member's: the same records, named by the member.
struct MemberObserver {
    server: String,
    hub: Arc<dyn Observer>,
}

impl Observer for MemberObserver {
    fn span_ended(&self, span: &Span) {
        self.hub.span_ended(span)
    }

    fn session_ended(&self, session: &SessionRecord) {
        self.hub.session_ended(session)
    }

    fn server_name(&self) -> Option<&str> {
        Some(&self.server)
    }
}

/// What member `name`'s client observes with when the hub's observer is `hub`.
pub(super) fn for_member(name: &str, hub: Option<&Arc<dyn Observer>>) -> Option<Arc<dyn Observer>> {
    hub.map(|hub| {
        Arc::new(MemberObserver {
            server: name.to_string(),
            hub: hub.clone(),
        }) as Arc<dyn Observer>
    })
}

impl Hub {
    /// Sets (or, with `None`, removes) the observer of every member, present and added later
    /// (by [`Hub::add_member`] or a reload): each member operation's [`Span`] and each member
    /// session's [`SessionRecord`], as [`crate::Client::set_observer`] delivers them, each with
    /// attribute `mcp.server.name` (`observe::SERVER_NAME`) naming its member. It replaces an
    /// observer set on a member's own client.
    pub fn set_observer(&self, observer: Option<Arc<dyn Observer>>) {
        self.update_handlers(HandlerPart::Observer, |h| h.observer = observer);
    }

    /// Sets (or removes) the hub's trace context source: a call of the hub's ([`Hub::call_tool`],
    /// [`Hub::call_member_tool`], [`Hub::get_prompt`], [`Hub::read_resource`],
    /// [`Hub::subscribe_resource`], the merged lists' fetches) whose options carry no trace
    /// context of their own (no `trace`, `trace_source`, or `traceparent` / `baggage` in
    /// `meta`) asks it as a client call asks [`RequestOptions::trace_source`]: once per member
    /// operation the call sends, on the thread polling the call, never for an answer from a
    /// cache. What it gives goes in that operation's `_meta` and is its record's `parent`.
    pub fn set_trace_source(&self, source: Option<TraceSource>) {
        *self.inner.trace_source.write().unwrap() = source;
    }

    /// Whether a call of `planned` with `opts`, started now, would send a member request: false
    /// when it surely would not (the hub is closed; no member is named `server`; the member's
    /// response cache answers the read; the merged list can be had without sending anything,
    /// and, for a routed call, has no item so named), true otherwise. A started call asks its trace context source up front, on the
    /// caller's thread, only when this is true, as a blocking call asks only for requests that
    /// go out.
    pub(crate) fn would_send(&self, planned: &Planned<'_>, opts: &RequestOptions) -> bool {
        if self.is_closed() {
            return false;
        }
        match *planned {
            Planned::Routed(kind, name) => match self.merged_now(kind) {
                Some(Ok(merged)) => merged.routes.contains_key(name),
                Some(Err(_)) => false, // the call fails as the list does, sending nothing
                None => true,
            },
            Planned::List(kind) => self.merged_now(kind).is_none(),
            Planned::Read(server, uri) => {
                let Some(member) = self.member(server) else {
                    return false;
                };
                let params = Map::from_iter([("uri".to_string(), Value::from(uri))]);
                !member
                    .client()
                    .is_some_and(|c| c.answered_from_cache(methods::RESOURCES_READ, &params, opts))
            }
        }
    }

    /// Whether an observer is set (the C ABI then gives each call a span sink).
    pub(crate) fn observed(&self) -> bool {
        self.inner.handlers.read().unwrap().observer.is_some()
    }

    /// `opts`, with the hub's trace context source when they have no context of their own.
    pub(super) fn traced<'a>(&self, opts: &'a RequestOptions) -> Cow<'a, RequestOptions> {
        if opts.trace.is_some() || opts.trace_source.is_some() {
            return Cow::Borrowed(opts);
        }
        match &*self.inner.trace_source.read().unwrap() {
            Some(source) => Cow::Owned(RequestOptions {
                trace_source: Some(source.clone()),
                ..opts.clone()
            }),
            None => Cow::Borrowed(opts),
        }
    }
}

/// A hub call as [`Hub::would_send`] looks at it before it starts.
pub(crate) enum Planned<'a> {
    /// A call routed by its exported name in the merged list of its kind.
    Routed(ListKind, &'a str),
    /// A merged list of its kind.
    List(ListKind),
    /// A read of resource `uri` (second) from member `server` (first).
    Read(&'a str, &'a str),
}
