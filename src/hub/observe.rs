//! The hub's observability: one span observer and one trace context source for every member,
//! present and added later (a reload's too). Each member's client gets the hub's observer under
//! the member's name, so each record carries `mcp.server.name`; the hub's calls (routed calls
//! and merged lists) take the source as their [`RequestOptions::trace_source`], so the member's
//! requests carry the host's context in `_meta` and each context the source gives has the record
//! of the member operation it went on.

use super::members::HandlerPart;
use super::Hub;
use crate::client::observe::{Observer, SessionRecord, Span};
use crate::client::{RequestOptions, TraceSource};
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
